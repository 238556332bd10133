#!/usr/bin/env python3
"""PyTorch's CUDA IPC sharing, timed the way tests/bench/lib_bench.c times tfs_open, for
tests/bench/lib_bench.sh (issue 4). Prints Markdown rows
"| what | n | p50 µs | p99 µs | mean µs |".

A producer process (spawn start method) allocates one CUDA tensor and shares it: it calls
torch.multiprocessing.reductions.reduce_tensor once per share, as pickling a tensor for
another process does, and sends the resulting (rebuild function, arguments) pairs. The
consumer (this process) times what turns such a pair into a usable tensor:

- rebuild, warm: fn(*args) -> tensor.data_ptr(), while one rebuilt tensor of the same
  storage is held, so torch's storage cache answers (the same condition as tfs_open's warm
  figure: one open of the tensor held for the whole run);
- rebuild, cold: nothing held, so every rebuild opens the CUDA IPC handle (and the event
  handle) and every release closes it;
- Pipe round trip, warm: ask the producer for the tensor over a torch.multiprocessing Pipe
  and receive it (the producer's reduce, pickling, the pipe, the rebuild): the whole share
  as torch.multiprocessing users do it.

The release of each rebuilt tensor (del) is timed apart, as tfs_close is. The garbage
collector is off while timing, so its pauses do not land on torch's p99.

  torch_ipc_bench.py [--bytes B] [--n N] [--cold N] [--roundtrips N]
"""
import argparse
import gc
import sys
import time

import torch
import torch.multiprocessing as mp
from torch.multiprocessing.reductions import reduce_tensor

WARMUP = 200


def producer(nbytes, nwarm, ncold, conn):
    torch.cuda.set_device(0)
    t = torch.ones(nbytes // 4, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    # One reduce per share: each carries its own producer-side reference counter, which
    # the consumer's rebuild (or release) gives back.
    conn.send([reduce_tensor(t) for _ in range(nwarm)])
    conn.send([reduce_tensor(t) for _ in range(ncold)])
    while True:
        msg = conn.recv()
        if msg == "tensor":
            conn.send(t)
        else:
            break
    torch.cuda.synchronize()


def pct(v, q):
    """Nearest-rank percentile of sorted v (as lib_bench.c computes it)."""
    k = max(1, min(len(v), int(len(v) * q + 0.999999)))
    return v[k - 1]


def row(label, ns):
    us = sorted(x / 1e3 for x in ns)
    print(f"| {label} | {len(us)} | {pct(us, 0.50):.1f} | {pct(us, 0.99):.1f} | "
          f"{sum(us) / len(us):.1f} |", flush=True)


def rebuild_rounds(shares, warmup, expect_ptr):
    """Times fn(*args) -> data_ptr(), then del, for each share; the first `warmup` are
    not recorded."""
    t_open, t_close = [], []
    clock = time.perf_counter_ns
    for i, (fn, args) in enumerate(shares):
        t0 = clock()
        x = fn(*args)
        ptr = x.data_ptr()
        t1 = clock()
        del x
        t2 = clock()
        if ptr == 0 or (expect_ptr is not None and ptr != expect_ptr):
            sys.exit(f"torch_ipc_bench: rebuilt tensor at {ptr:#x}, expected {expect_ptr:#x}")
        if i >= warmup:
            t_open.append(t1 - t0)
            t_close.append(t2 - t1)
    return t_open, t_close


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", type=int, default=4 << 20)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--cold", type=int, default=1000)
    ap.add_argument("--roundtrips", type=int, default=2000)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_ipc_bench: no CUDA device visible to torch")

    ctx = mp.get_context("spawn")
    here, there = ctx.Pipe()
    p = ctx.Process(target=producer,
                    args=(a.bytes, 1 + WARMUP + a.n, WARMUP // 10 + a.cold, there))
    p.start()
    torch.cuda.set_device(0)
    torch.zeros(1, device="cuda")      # the CUDA context, outside every timing
    warm = here.recv()
    cold = here.recv()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}", file=sys.stderr)

    gc.disable()
    # Held for the warm rounds: torch's cache keeps the storage (and its IPC mapping).
    keep = warm[0][0](*warm[0][1])
    kptr = keep.data_ptr()
    if float(keep[0]) != 1.0:
        sys.exit("torch_ipc_bench: the shared tensor does not hold the producer's values")

    o, c = rebuild_rounds(warm[1:], WARMUP, kptr)
    row("torch: rebuild_cuda_tensor -> data_ptr, warm (storage cached)", o)
    row("torch: del tensor, warm", c)

    rt = []
    for i in range(a.roundtrips + WARMUP):
        t0 = time.perf_counter_ns()
        here.send("tensor")
        x = here.recv()
        ptr = x.data_ptr()
        t1 = time.perf_counter_ns()
        del x
        if ptr != kptr:
            sys.exit("torch_ipc_bench: Pipe round trip gave another pointer")
        if i >= WARMUP:
            rt.append(t1 - t0)
    row("torch: Pipe round trip, request -> rebuilt tensor's data_ptr, warm", rt)

    del keep
    gc.collect()            # the storage cache's weak reference must be dead for "cold"
    o, c = rebuild_rounds(cold, WARMUP // 10, None)
    row("torch: rebuild_cuda_tensor -> data_ptr, cold (opens the IPC handle)", o)
    row("torch: del tensor, cold (closes the IPC handle)", c)
    gc.enable()

    here.send("done")
    p.join(60)
    if p.exitcode != 0:
        sys.exit(f"torch_ipc_bench: producer exited {p.exitcode}")


if __name__ == "__main__":
    main()
