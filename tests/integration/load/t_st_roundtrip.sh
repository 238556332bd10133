# A safetensors file of mixed dtypes (names with '/', a scalar, an empty tensor, a tensor
# over several of the pipeline's 8 MiB pieces) loads byte-exact into a directory of
# tensors, by the mapped path and through the FUSE files, and saves back to the same file.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
python3 "$ROOT/tests/integration/load/st_make.py" m.safetensors 1 big:F32:5242881 \
	layers/0/w:BF16:1000,3 layers/1/w:F16:7 ids:I64:333 mask:U8:4097 scalar:F64:- \
	empty:F32:0 flags:BOOL:9 || exit 1
# each tensor's bytes as the file holds them
python3 - m.safetensors <<'PY' > want.txt
import json, struct, sys, hashlib
d = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", d[:8])[0]
for k, v in sorted(json.loads(d[8:8 + n]).items()):
    if k != "__metadata__":
        a, b = v["data_offsets"]
        print(k, hashlib.sha256(d[8 + n + a:8 + n + b]).hexdigest())
PY
got() {   # got DIR: each tensor's bytes as the mount serves them
	(cd "$1" && find . -type f | sed 's|^\./||' | sort | while read -r f; do
		echo "$f $(sha256sum < "$f" | cut -d' ' -f1)"; done)
}
check "load (3 copy threads)" "$CTL" load -q --threads 3 m.safetensors "$M/m"
eq "every tensor's bytes" "$(cat want.txt)" "$(got "$M/m")"
eq "dtype of layers/0/w" "bf16" "$(xget "$M/m/layers/0/w" dtype)"
eq "shape of layers/0/w" "[1000,3]" "$(xget "$M/m/layers/0/w" shape)"
eq "scalar shape" "[]" "$(xget "$M/m/scalar" shape)"
check "save back byte-identical" bash -c "'$CTL' save -q '$M/m' out.safetensors && cmp m.safetensors out.safetensors"
check "load through the FUSE files (TENSORCTL_COPY=fuse)" env TENSORCTL_COPY=fuse "$CTL" load -q m.safetensors "$M/f"
eq "every tensor's bytes (FUSE files)" "$(cat want.txt)" "$(got "$M/f")"
check "save through the FUSE files byte-identical" bash -c "TENSORCTL_COPY=fuse '$CTL' save -q '$M/f' out2.safetensors && cmp m.safetensors out2.safetensors"
check "one copy thread" bash -c "'$CTL' load -q --threads 1 m.safetensors '$M/one' && '$CTL' save -q -j 1 '$M/one' out3.safetensors && cmp m.safetensors out3.safetensors"
finish
