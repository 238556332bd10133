#!/usr/bin/env python3
"""tensorfs.open -> torch.from_dlpack beside torch.multiprocessing's rebuild of a shared
CUDA tensor, warm and cold, in one run (issue 17). Prints a Markdown table
"| what | n | p50 µs | p99 µs | mean µs |" and a verdict line.

  py_open_bench.py [--build build] [--bytes B] [--n N] [--cold N]

Starts its own redis-server and tensorfs mount (cuda backend) from BUILD, publishes one
tensor of B bytes from torch, and times in this process:

- tensorfs warm: tensorfs.open(path) -> torch.from_dlpack(t) -> data_ptr(), while one open
  of the tensor is held for the whole run (the library's per-path cache and its mapping
  answer: the same condition as torch's warm rebuild, whose storage cache answers);
- tensorfs cold: the same with nothing held, so each round opens the file through FUSE
  and the CUDA IPC handle, and each release closes them;
- torch: tests/bench/torch_ipc_bench.py's producer shares one CUDA tensor through
  reduce_tensor; rebuild_cuda_tensor -> data_ptr() warm (storage cached) and cold (opens
  the IPC handle), as that script times them.

The releases (del of the torch tensor, Tensor.close) are timed apart. The garbage
collector is off while timing. Needs a GPU, torch and the package (PYTHONPATH or pip).
"""
import argparse
import gc
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.dont_write_bytecode = True        # no __pycache__ in the source tree
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))

WARMUP = 200


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--bytes", type=int, default=4 << 20)
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--cold", type=int, default=500)
    a = ap.parse_args()

    os.environ.setdefault("TFS_BUILD", a.build)
    os.environ.setdefault("TFS_BACKEND", "cuda")
    import tempfile

    import torch
    import torch.multiprocessing as mp

    import conftest                   # the tests' Mount: redis-server + daemon
    import tensorfs
    import torch_ipc_bench as tib     # torch's side, timed as in RESULTS-lib.md

    if not torch.cuda.is_available():
        sys.exit("py_open_bench: no CUDA device visible to torch")
    m = conftest.Mount(tempfile.mkdtemp(prefix="tfs-pybench."))
    m.start()
    try:
        ctx = mp.get_context("spawn")
        here, there = ctx.Pipe()
        prod = ctx.Process(target=tib.producer,
                           args=(a.bytes, 1 + WARMUP + a.n, WARMUP // 10 + a.cold, there))
        prod.start()
        torch.cuda.set_device(0)
        src = torch.ones(a.bytes // 4, dtype=torch.float32, device="cuda")
        p = m.path("w")
        tensorfs.publish(p, src).close()
        print("torch %s, %s, tensorfs package from %s, library %s" % (
            torch.__version__, torch.cuda.get_device_name(0),
            os.path.dirname(tensorfs.__file__), tensorfs._lib.PATH), file=sys.stderr)
        print("| what | n | p50 µs | p99 µs | mean µs |")
        print("|---|---|---|---|---|")
        clock = time.perf_counter_ns

        def tfs_rounds(n, warmup):
            t_open, t_close = [], []
            for i in range(n + warmup):
                t0 = clock()
                t = tensorfs.open(p)
                x = torch.from_dlpack(t)
                ptr = x.data_ptr()
                t1 = clock()
                del x
                t.close()
                t2 = clock()
                if not ptr:
                    sys.exit("py_open_bench: NULL data pointer")
                if i >= warmup:
                    t_open.append(t1 - t0)
                    t_close.append(t2 - t1)
            return t_open, t_close

        results = {}
        gc.disable()
        keep = tensorfs.open(p)
        keep_view = torch.from_dlpack(keep)
        if float(keep_view[0]) != 1.0:
            sys.exit("py_open_bench: the tensor does not hold what torch published")
        o, c = tfs_rounds(a.n, WARMUP)
        results["tfs warm"] = o
        tib.row("tensorfs: open -> torch.from_dlpack -> data_ptr, warm (one open held)", o)
        tib.row("tensorfs: del tensor + close, warm", c)
        del keep_view
        keep.close()
        gc.collect()
        time.sleep(0.2)
        o, c = tfs_rounds(a.cold, WARMUP // 10)
        results["tfs cold"] = o
        tib.row("tensorfs: open -> torch.from_dlpack -> data_ptr, cold (nothing held)", o)
        tib.row("tensorfs: del tensor + close, cold (closes the IPC handle)", c)

        warm = here.recv()
        cold = here.recv()
        kt = warm[0][0](*warm[0][1])
        o, c = tib.rebuild_rounds(warm[1:], WARMUP, kt.data_ptr())
        results["torch warm"] = o
        tib.row("torch: rebuild_cuda_tensor -> data_ptr, warm (storage cached)", o)
        tib.row("torch: del tensor, warm", c)
        del kt
        gc.collect()
        o, c = tib.rebuild_rounds(cold, WARMUP // 10, None)
        results["torch cold"] = o
        tib.row("torch: rebuild_cuda_tensor -> data_ptr, cold (opens the IPC handle)", o)
        tib.row("torch: del tensor, cold (closes the IPC handle)", c)
        gc.enable()
        here.send("done")
        prod.join(60)

        verdict = []
        for kind in ("warm", "cold"):
            f, t = sorted(results["tfs " + kind]), sorted(results["torch " + kind])
            for q in (0.50, 0.99):
                fv, tv = tib.pct(f, q) / 1e3, tib.pct(t, q) / 1e3
                verdict.append("%s p%d %s (%.1f vs %.1f µs)" % (
                    kind, int(q * 100), "faster" if fv < tv else "NOT faster", fv, tv))
        print("\ntensorfs vs torch: " + "; ".join(verdict))
    finally:
        problems = m.stop()
        if problems:
            print("py_open_bench: " + "; ".join(problems), file=sys.stderr)


if __name__ == "__main__":
    main()
