# The safetensors side of tests/bench/load_bench.sh (python3 with torch and safetensors).
#   load_bench.py make FILE        53 tensors, bf16/f16/f32/i64/u8, 2.17 GiB, written by
#                                  safetensors.torch.save_file
#   load_bench.py load FILE N      N timed safetensors.torch.load_file(FILE, device="cuda")
#                                  after one untimed (CUDA context, allocator warm)
#   load_bench.py save FILE OUT N  FILE loaded onto the GPU once, then N timed
#                                  safetensors.torch.save_file(tensors, OUT), each into a
#                                  new file (the old one unlinked first, untimed)
# Output as load_bench.c: "ROW SECONDS GB/s".
import os, sys, time
import torch
from safetensors.torch import load_file, save_file

mode, f = sys.argv[1], sys.argv[2]
if mode == "make":
    g = torch.Generator(device="cuda").manual_seed(1)
    def rnd(shape, dt):
        if dt in (torch.int64, torch.uint8):
            hi = 2**40 if dt == torch.int64 else 255
            return torch.randint(0, hi, shape, generator=g, device="cuda", dtype=dt).cpu()
        return torch.randn(shape, generator=g, device="cuda").to(dt).cpu()
    t = {"embed": rnd((64000, 4096), torch.bfloat16), "lm_head": rnd((64000, 4096), torch.float16),
         "final_norm": rnd((4096,), torch.float32), "ids": rnd((1 << 20,), torch.int64),
         "mask": rnd((64 << 20,), torch.uint8)}
    for i in range(12):
        t["layers.%d.w1" % i] = rnd((4096, 4096), torch.float32)
        t["layers.%d.w2" % i] = rnd((4096, 4096), torch.bfloat16)
        t["layers.%d.norm" % i] = rnd((4096,), torch.float32)
        t["layers.%d.pos" % i] = rnd((4096,), torch.int64)
    save_file(t, f, metadata={"format": "pt"})
    print("made %s: %d tensors, %d bytes" % (f, len(t), os.path.getsize(f)))
elif mode == "load":
    n, size = int(sys.argv[3]), os.path.getsize(f)
    torch.zeros(1, device="cuda")
    d = load_file(f, device="cuda"); torch.cuda.synchronize(); del d
    for _ in range(n):
        t0 = time.perf_counter()
        d = load_file(f, device="cuda"); torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        del d
        print("safetensors-load %.4f %.2f" % (dt, size / dt / 1e9), flush=True)
elif mode == "save":
    out, n, size = sys.argv[3], int(sys.argv[4]), os.path.getsize(f)
    d = load_file(f, device="cuda"); torch.cuda.synchronize()
    for _ in range(n):
        if os.path.exists(out):
            os.unlink(out)
        t0 = time.perf_counter()
        save_file(d, out, metadata={"format": "pt"})
        dt = time.perf_counter() - t0
        print("safetensors-save %.4f %.2f" % (dt, os.path.getsize(out) / dt / 1e9), flush=True)
    os.unlink(out)
