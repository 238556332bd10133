# A .safetensors file loads as a directory of tensors (dtypes, shapes, a scalar, an empty
# one, the metadata on the directory) and saves back byte-identical, with or without
# metadata, in the library's order (files written by PyTorch in tests/data).
. "$(dirname "$0")/../lib.sh"
ctl_mounts
nometa_round_trip() { "$CTL" load nometa.safetensors "$M/nm" && "$CTL" save "$M/nm" nm.out.safetensors && cmp nometa.safetensors nm.out.safetensors; }
data_round_trip() {
	"$CTL" load "$ROOT/tests/data/$1.safetensors" "$M/$1" && "$CTL" save "$M/$1" "$1.out.safetensors" &&
		cmp "$ROOT/tests/data/$1.safetensors" "$1.out.safetensors"
}
check "load safetensors" "$CTL" load m.safetensors "$M/m"
check "a directory of tensors" test -d "$M/m"
eq "safetensors dtype" bf16 "$(xget "$M/m/layers/0/bias" dtype)"
eq "safetensors shape" "[4,8]" "$(xget "$M/m/embed.weight" shape)"
eq "safetensors scalar" "[]" "$(xget "$M/m/scale" shape)"
eq "safetensors empty tensor" 0 "$(size_of "$M/m/empty")"
eq "metadata kept on the directory" '{"format":"pt","note":"made by t_tensorctl"}' "$(getfattr --only-values -n user.safetensors.metadata "$M/m" 2>/dev/null)"
check "save safetensors" "$CTL" save "$M/m" m.out.safetensors
check "safetensors round trip byte-identical" cmp m.safetensors m.out.safetensors
check "no-metadata round trip byte-identical" nometa_round_trip
check "python reads the saved safetensors" /usr/bin/python3 -c "
import json, struct
d = open('m.out.safetensors', 'rb').read(); n = struct.unpack('<Q', d[:8])[0]; h = json.loads(d[8:8+n])
assert h['__metadata__']['format'] == 'pt' and h['embed.weight']['shape'] == [4, 8]
assert max(v['data_offsets'][1] for k, v in h.items() if k != '__metadata__') == len(d) - 8 - n"
# Files written by safetensors 0.8.0 from PyTorch on the GPU machine (tests/data): the order
# of tensors in a saved file must be the library's, so they round trip byte for byte.
for f in torch-mixed torch-dtype-order; do
	check "$f.safetensors (made by PyTorch) round trips byte-identical" data_round_trip "$f"
done
fails_with "save of a directory as npy" "directory saves only as safetensors" "$CTL" save --format npy "$M/m" x.npy
finish
