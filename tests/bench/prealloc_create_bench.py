#!/usr/bin/env python3
"""The create of a large tensor in a preallocated host tier (issue 35,
docs/tiers.md#preallocation): a create must read zeros, and the pool zeroes only what
freed tensors left (fs/mem/dirty_ranges.h), so a create from memory fresh from the kernel
costs no memset and one where a freed tensor was costs one of its size. Both timed:

- fresh: a create (tensorfs.create's steps: the file, its dtype, its shape, which
  allocates, then an open; the whole timed, and the allocation alone) of GIB GiB in the host tier ("cpu") of a mount with
  --preallocate cpu:4*GIB GiB (its run of 4 segments holds two such tensors: two fresh
  creates, both kept);
- reused: both unlinked, then ROUNDS creates, each where a freed one was (every byte
  dirty: a memset of GIB GiB), each unlinked after;
- every byte of each tensor read back through the mount, to be zero; the fresh ones then
  written whole (0xa5) before they are unlinked.

  prealloc_create_bench.py [--build build] [--backend host|cuda] [--gib 1] [--rounds 3]

On the host backend (any machine) the mount serves a host tier with -o host_devices=1;
on the cuda backend (the GPU machine) the host tier is the one beside the GPUs. Prints
one line per create and a summary line."""
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


def zero_check(path, nbytes):
    """Whether the tensor at path reads zeros, all of it, in 64 MiB reads through the
    mount."""
    blank = bytes(64 << 20)
    with open(path, "rb", buffering=0) as f:
        left = nbytes
        while left:
            b = f.read(min(left, len(blank)))
            if not b or b != blank[:len(b)]:
                return False
            left -= len(b)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--backend", default="host")
    ap.add_argument("--gib", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    os.environ.setdefault("TFS_BUILD", a.build)
    os.environ["TFS_BACKEND"] = a.backend
    os.environ.setdefault("TENSORFS_LIBRARY", os.path.join(ROOT, a.build, "libtensorfs.so"))
    import conftest
    import tensorfs

    nbytes = a.gib << 30
    opts = ["--preallocate", "cpu:%dG" % (4 * a.gib)]
    if a.backend == "host":
        opts = ["-o", "host_devices=1"] + opts
    m = conftest.Mount(tempfile.mkdtemp(prefix="tfs-pcb."), opts)
    m.start()
    fresh, reused, bad = [], [], 0

    def create(name):
        """tensorfs.create's steps (python/tensorfs/tensor.py _make), timed: all of them,
        and the one that allocates (the shape attribute)."""
        p = m.path(name)
        t0 = time.perf_counter()
        os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        os.setxattr(p, "user.tensor.device", b"cpu")
        os.setxattr(p, "user.tensor.dtype", b"u8")
        t1 = time.perf_counter()
        os.setxattr(p, "user.tensor.shape", b"[%d]" % nbytes)
        t2 = time.perf_counter()
        tensorfs.open(p, "r+").close()
        t3 = time.perf_counter()
        return p, (t3 - t0, t2 - t1)

    try:
        made = []
        for k in range(2):
            p, dt = create("fresh%d" % k)
            fresh.append(dt)
            ok = zero_check(p, nbytes)
            bad += not ok
            print("# fresh create %d of %d GiB: %.3f ms (its allocation %.3f ms), zeros %s" %
                  (k, a.gib, dt[0] * 1e3, dt[1] * 1e3, "ok" if ok else "NOT ZERO"))
            # dirty it as a user would: write every byte
            with open(p, "r+b", buffering=0) as f:
                chunk = b"\xa5" * (64 << 20)
                for _ in range(nbytes // len(chunk)):
                    f.write(chunk)
            made.append(p)
        for p in made:
            os.unlink(p)
        for k in range(a.rounds):
            p, dt = create("reused%d" % k)
            reused.append(dt)
            ok = zero_check(p, nbytes)
            bad += not ok
            print("# create %d of %d GiB where a freed tensor was: %.3f ms (its allocation "
                  "%.3f ms), zeros %s" % (k, a.gib, dt[0] * 1e3, dt[1] * 1e3,
                                          "ok" if ok else "NOT ZERO"))
            os.unlink(p)
    finally:
        m.stop()
    print("| backend %s | %d GiB | fresh pool memory: create %.3f ms, allocation %.3f ms | "
          "where a freed tensor was (memset): create %.3f ms, allocation %.3f ms | zeros %s |"
          % (a.backend, a.gib, min(d[0] for d in fresh) * 1e3, min(d[1] for d in fresh) * 1e3,
             min(d[0] for d in reused) * 1e3, min(d[1] for d in reused) * 1e3,
             "ok" if not bad else "%d NOT ZERO" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
