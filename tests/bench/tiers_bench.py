#!/usr/bin/env python3
"""Sleep and wake of a model directory between GPU 0 and host memory (docs/tiers.md,
issue 35), side by side with what a user does without tensorfs, in one run on one GPU:

- tensorfs: tensorfs.move(DIR, "cpu") then tensorfs.move(DIR, 0) of N tensors of MIB MiB
  (default 64 x 256 MiB = 16 GiB) made on GPU 0, twice, on two mounts: one without
  --preallocate (each sleep makes new host memory and registers it with the driver) and
  one with --preallocate cpu:SIZE,0:SIZE (the model's size, 1/8 and 2 GiB more: tensors
  are carved from segments reserved at start, the host ones registered with the driver
  once; a sleep keeps GPU 0's segments for the wake); the bytes checked after each wake
  (a sum per tensor on the GPU before and after); with the pools, the create of a 1 GiB
  tensor on GPU 0 and in the host tier timed too (the host one zeroed: a memset);
- torch pageable: .to("cpu") of the same state dict, then .to("cuda") back;
- torch pinned: copy_ into pinned host tensors allocated beforehand (their allocation
  timed apart) and back, non_blocking, synchronized.

--big-mib M adds two tensors of M MiB to the model (a real LLM's embedding and lm_head
are 1-4 GiB: larger than a pool's segment of 1 GiB, they are served by its runs).

Prints a Markdown table: seconds and GB/s each way, and tensorfs over the pinned copy.
  tiers_bench.py [--build build] [--n 64] [--mib 256] [--big-mib 0]
Needs the cuda backend's build, redis-server, torch with CUDA (the GPU machine)."""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
sys.path.insert(0, os.path.join(ROOT, "python"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--big-mib", type=int, default=0)
    a = ap.parse_args()
    os.environ.setdefault("TFS_BUILD", a.build)
    os.environ.setdefault("TFS_BACKEND", "cuda")
    os.environ.setdefault("TENSORFS_LIBRARY", os.path.join(ROOT, a.build, "libtensorfs.so"))
    import torch

    import conftest
    import tensorfs

    if not torch.cuda.is_available():
        sys.exit("tiers_bench: no CUDA device visible to torch")
    nbytes = a.mib << 20
    sizes = [a.big_mib << 20] * (2 if a.big_mib else 0) + [nbytes] * a.n
    total = sum(sizes)
    rows = []

    def row(what, sleep_s, wake_s, note=""):
        rows.append((what, sleep_s, wake_s, note))

    def sync():
        torch.cuda.synchronize()

    # --- tensorfs, without --preallocate and with the model's size and more preallocated
    room = (total + total // 8 + (2 << 30)) >> 20
    for pre in (None, "cpu:%dM,0:%dM" % (room, room)):
        run_tensorfs(a, pre, row, sizes, torch, conftest, tensorfs)

    # --- torch
    sd = [torch.empty(n, dtype=torch.uint8, device="cuda:0").random_(0, 256) for n in sizes]
    sync()
    t0 = time.perf_counter()
    cpu = [x.to("cpu") for x in sd]
    sync()
    t1 = time.perf_counter()
    back = [x.to("cuda:0") for x in cpu]
    sync()
    t2 = time.perf_counter()
    row("torch .to(\"cpu\") / .to(\"cuda\") (pageable)", t1 - t0, t2 - t1)
    del cpu, back
    t0 = time.perf_counter()
    pinned = [torch.empty(n, dtype=torch.uint8, pin_memory=True) for n in sizes]
    tp = time.perf_counter() - t0
    for rnd in (1, 2):
        t0 = time.perf_counter()
        for p, x in zip(pinned, sd):
            p.copy_(x, non_blocking=True)
        sync()
        t1 = time.perf_counter()
        for p, x in zip(pinned, sd):
            x.copy_(p, non_blocking=True)
        sync()
        t2 = time.perf_counter()
        row("torch pinned copy_, round %d" % rnd, t1 - t0, t2 - t1,
            "pinned allocation %.2f s apart" % tp if rnd == 1 else "")
    pin_sleep = min(r[1] for r in rows if r[0].startswith("torch pinned"))
    pin_wake = min(r[2] for r in rows if r[0].startswith("torch pinned"))

    print("# %s; %d x %d MiB%s = %.1f GiB; %d CPUs" % (
        torch.cuda.get_device_name(0), a.n, a.mib,
        " + 2 x %d MiB" % a.big_mib if a.big_mib else "", total / 2**30, os.cpu_count()))
    print()
    print("| path | sleep s | sleep GB/s | wake s | wake GB/s | sleep, wake / pinned | note |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for what, s, w, note in rows:
        print("| %s | %.3f | %.1f | %.3f | %.1f | %.2f, %.2f | %s |" % (
            what, s, total / s / 1e9, w, total / w / 1e9, pin_sleep / s, pin_wake / w, note))


def run_tensorfs(a, pre, row, sizes, torch, conftest, tensorfs):
    """Two rounds of sleep and wake of the model directory on a mount of its own, with
    --preallocate pre (None: without); with it, the create of a 1 GiB host-tier tensor
    too."""
    def sync():
        torch.cuda.synchronize()

    opts = ["--preallocate", pre] if pre else []
    label = "tensorfs.move%s" % (", --preallocate " + pre if pre else "")
    m = conftest.Mount(tempfile.mkdtemp(prefix="tfs-tiers."), opts)
    m.start()
    try:
        d = m.path("model")
        os.mkdir(d)
        sums = []
        for i, nbytes in enumerate(sizes):
            with tensorfs.create(os.path.join(d, "t%03d" % i), "u8", [nbytes], device=0) as t:
                x = torch.from_dlpack(t)
                x.random_(0, 256)
                sums.append(int(x.view(torch.int64).sum()))
                del x
            sync()

        def check():
            bad = 0
            for i in range(len(sizes)):
                with tensorfs.open(os.path.join(d, "t%03d" % i)) as t:
                    x = torch.from_dlpack(t)
                    bad += int(x.view(torch.int64).sum()) != sums[i]
                    del x
            return bad

        for rnd in (1, 2):
            t0 = time.perf_counter()
            tensorfs.move(d, "cpu")
            t1 = time.perf_counter()
            free_gpu = torch.cuda.mem_get_info(0)[0]
            tensorfs.move(d, 0)
            t2 = time.perf_counter()
            bad = check()
            row("%s, round %d" % (label, rnd), t1 - t0, t2 - t1,
                "bytes %s; GPU free while asleep %.1f GiB" %
                ("ok" if bad == 0 else "DIFFER in %d tensors" % bad, free_gpu / 2**30))
        if pre:
            for dev in (0, "cpu"):
                best = None
                for k in range(3):
                    p = m.path("one_gib_%s_%d" % (dev, k))
                    t0 = time.perf_counter()
                    tensorfs.create(p, "u8", [1 << 30], device=dev).close()
                    dt = time.perf_counter() - t0
                    best = dt if best is None else min(best, dt)
                    os.unlink(p)
                print("# create of a 1 GiB tensor on %s from its pool (tensorfs.create, "
                      "best of 3): %.2f ms" % (dev, best * 1e3))
    finally:
        m.stop()


if __name__ == "__main__":
    main()
