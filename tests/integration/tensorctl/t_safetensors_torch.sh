# Where PyTorch and the safetensors library are installed (the GPU machine): files they
# write load, save back byte-identical and read back equal; raw torch bytes load.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
if python3 -c 'import torch, safetensors.torch' 2>/dev/null; then
	check "torch-written safetensors loads" python3 -c "
import torch, subprocess
from safetensors.torch import save_file
g = torch.Generator().manual_seed(1)
t = {'model.embed.weight': torch.randn(16, 8, generator=g).to(torch.bfloat16),
     'model.layers.0.w': torch.randn(8, 8, generator=g), 'ids': torch.arange(5),
     'mask': torch.tensor([True, False]), 'half': torch.randn(3, generator=g).half()}
save_file(t, 'pt.safetensors', metadata={'format': 'pt'})
subprocess.run(['$CTL', 'load', 'pt.safetensors', '$M/pt'], check=True)"
	eq "torch bf16 tensor keeps dtype" bf16 "$(xget "$M/pt/model.embed.weight" dtype)"
	check "saved back, torch reads equal tensors" python3 -c "
import torch, subprocess
from safetensors.torch import load_file
subprocess.run(['$CTL', 'save', '$M/pt', 'pt.out.safetensors'], check=True)
a, b = load_file('pt.safetensors'), load_file('pt.out.safetensors')
assert a.keys() == b.keys() and all(a[k].dtype == b[k].dtype and torch.equal(a[k], b[k]) for k in a)"
	check "torch-written safetensors round trip byte-identical" cmp pt.safetensors pt.out.safetensors
	check "torch.save'd tensor bytes load raw and match" python3 -c "
import torch, subprocess, os
x = torch.randn(1000)
open('raw.bin', 'wb').write(x.numpy().tobytes())
subprocess.run(['$CTL', 'load', '--dtype', 'f32', '--shape', '1000', 'raw.bin', '$M/torchraw'], check=True)
y = torch.frombuffer(bytearray(open('$M/torchraw', 'rb').read()), dtype=torch.float32)
assert torch.equal(x, y)"
else
	echo "skip - torch not installed: safetensors files written by PyTorch"
fi
if python3 -c 'import safetensors' 2>/dev/null; then
	"$CTL" load m.safetensors "$M/m" && "$CTL" save "$M/m" m.out.safetensors
	check "safetensors library reads it" python3 -c "from safetensors import safe_open; f=safe_open('m.out.safetensors','np'); assert list(f.get_slice('ids').get_shape())==[5]"
else
	echo "skip - safetensors not installed: safetensors library reading the file"
fi
finish
