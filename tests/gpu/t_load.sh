# tensorctl load on the cuda backend (tfs_load: pinned buffers, cudaMemcpyAsync on several
# streams) of a file written by the safetensors library (safetensors.torch.save_file, mixed
# dtypes, tensors over several 8 MiB pieces): every tensor's bytes, as another CUDA process
# reads them through its IPC handle, are the file's; tensorctl save gives back tensors
# torch finds equal; a raw file round trips byte-exact.
. "$(dirname "$0")/gpulib.sh"
N1="load of a torch-written safetensors file: every tensor byte-exact on the GPU"
N2="save back: torch loads equal tensors"
N3="raw 40 MiB file round trip on cuda"
gpu_tests "$N1" "$N2" "$N3"
if ! python3 -c "import torch, safetensors" 2>/dev/null; then
	for n in "$N1" "$N2" "$N3"; do echo "skip - $n: python3 has no torch or safetensors"; done
	exit 0
fi
CTL="$GROOT/$GBUILD/tensorctl"
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 || exit 1
cd "$T"
python3 - <<'PY' || exit 1
import torch
from safetensors.torch import save_file
g = torch.Generator().manual_seed(5)
t = {
    "emb": torch.randn(3000, 1024, generator=g).to(torch.bfloat16),   # 6 MiB
    "w/big": torch.randn(5, 1024, 1024, generator=g),                  # 20 MiB f32
    "w/h": torch.randn(777, generator=g).to(torch.float16),
    "ids": torch.randint(-2**40, 2**40, (4099,), generator=g, dtype=torch.int64),
    "mask": torch.randint(0, 255, (10007,), generator=g, dtype=torch.uint8),
    "s": torch.tensor(3.5, dtype=torch.float32),
}
save_file(t, "m.safetensors", metadata={"format": "pt"})
PY
"$CTL" load -q m.safetensors "$M/m" 2>err.txt
rc=$?
bad=
if [ $rc -eq 0 ]; then
	while read -r name off len; do
		[ "$len" -gt 0 ] || continue
		cmp -s <(dump "$M/m/$name") <(tail -c +$((off + 1)) m.safetensors | head -c "$len") || bad="$bad $name"
	done < <(python3 -c "
import json, struct
d = open('m.safetensors', 'rb').read(); n = struct.unpack('<Q', d[:8])[0]
for k, v in json.loads(d[8:8 + n]).items():
    if k != '__metadata__':
        a, b = v['data_offsets']; print(k, 8 + n + a, b - a)")
fi
if [ $rc -eq 0 ] && [ -z "$bad" ]; then ok "$N1"; else nok "$N1: rc $rc $(cat err.txt), differ:$bad"; fi
check "$N2" python3 -c "
import subprocess, torch
from safetensors.torch import load_file
subprocess.run(['$CTL', 'save', '-q', '$M/m', 'out.safetensors'], check=True)
a, b = load_file('m.safetensors'), load_file('out.safetensors')
assert a.keys() == b.keys(), (a.keys(), b.keys())
for k in a: assert a[k].dtype == b[k].dtype and torch.equal(a[k], b[k]), k"
head -c $((40 << 20)) /dev/urandom > r.bin
check "$N3" bash -c "'$CTL' load -q r.bin '$M/r' && cmp r.bin <(dump '$M/r') && '$CTL' save -q '$M/r' r.out && cmp r.bin r.out"
rm -rf "$M"/*
cd /
finish
