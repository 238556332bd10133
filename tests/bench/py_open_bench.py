#!/usr/bin/env python3
"""tensorfs.open -> torch.from_dlpack beside torch.multiprocessing's rebuild of a shared
CUDA tensor, warm and cold, in one run (issue 17). Prints a Markdown table
"| what | n | p50 µs | p99 µs | mean µs |" and a verdict line.

  py_open_bench.py [--build build] [--bytes B] [--n N] [--cold N] [--first N]

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

- tensorfs from metadata in hand: the JSON of one queue `get` reply (the hold it takes
  keeps the tensor alive, as the producer's reference keeps torch's), then
  tensorfs.open_meta(reply) -> torch.from_dlpack(t) -> data_ptr() each round, warm (one
  open held) and cold (nothing else maps the memory: the CUDA IPC handle is opened each
  round). This is what torch's rebuild does: start from what the producer delivered.
- tensorfs first open: FIRST new tensors of B bytes, each opened once by path, as a
  consumer opens a tensor it never saw (no metadata remembered: the library reads it by
  path with no stat before, then maps the handle while its helper opens the file); compared
  with torch's cold rebuild, which is torch's first sight of a shared tensor.
- breakdown of the by-path cold round, in the same rounds: os.open(path) (the FUSE OPEN)
  and then open_meta -> from_dlpack (the IPC open), each timed; the release likewise.

The releases (del of the torch tensor, Tensor.close) are timed apart. The garbage
collector is off while timing. After the table, the cold series' tails: the maximum, the
rounds over 1 ms and when they came (ms from the series' start), to tell a periodic
stall from the daemon from one of the driver. Needs a GPU, torch and the package
(PYTHONPATH or pip). --log DIR copies the daemon's log there (its lock statistics).
"""
import argparse
import gc
import json
import os
import shutil
import socket
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
    ap.add_argument("--first", type=int, default=500)
    ap.add_argument("--log", default=None)
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

        # The metadata in hand: one queue get reply, as a consumer receives it.
        cmd = {"op": "get", "name": "w", "pid": os.getpid(), "node": socket.gethostname(),
               "id": "bench", "reply": "bench:reply"}
        m.cli("lpush", "tensor_lifecycle", json.dumps(cmd))
        reply = m.cli("brpop", "bench:reply", "5").splitlines()
        if len(reply) != 2 or not json.loads(reply[1]).get("ok"):
            sys.exit("py_open_bench: the queue's get failed: %r" % (reply,))
        reply = reply[1].encode()
        tails = []

        def tfs_rounds(n, warmup, opener, label=None, capsule=False):
            t_open, t_close, slow = [], [], []
            start = clock()
            for i in range(n + warmup):
                t0 = clock()
                t = opener()
                x = torch.from_dlpack(t.__dlpack__() if capsule else t)
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
                    if t1 - t0 > 1000000:
                        slow.append("%.0f ms: %.2f ms" % ((t0 - start) / 1e6, (t1 - t0) / 1e6))
            if label:
                tails.append((label, t_open, slow))
            return t_open, t_close

        def split_rounds(n, warmup):
            """The by-path cold round in its two parts, as tfs_open does them."""
            fo, io, cl, tot, slow = [], [], [], [], []
            start = clock()
            for i in range(n + warmup):
                t0 = clock()
                fd = os.open(p, os.O_RDONLY | os.O_CLOEXEC)
                t1 = clock()
                t = tensorfs.open_meta(reply)
                x = torch.from_dlpack(t)
                ptr = x.data_ptr()
                t2 = clock()
                del x
                t.close()
                os.close(fd)
                t3 = clock()
                if not ptr:
                    sys.exit("py_open_bench: NULL data pointer")
                if i >= warmup:
                    fo.append(t1 - t0)
                    io.append(t2 - t1)
                    cl.append(t3 - t2)
                    tot.append(t2 - t0)
                    if t2 - t0 > 1000000:
                        slow.append("%.0f ms: open(2) %.2f ms, IPC open %.2f ms" % (
                            (t0 - start) / 1e6, (t1 - t0) / 1e6, (t2 - t1) / 1e6))
            tails.append(("split by-path cold (os.open + open_meta)", tot, slow))
            return fo, io, cl, tot

        results = {}
        gc.disable()
        keep = tensorfs.open(p)
        keep_view = torch.from_dlpack(keep)
        if float(keep_view[0]) != 1.0:
            sys.exit("py_open_bench: the tensor does not hold what torch published")
        by_path = lambda: tensorfs.open(p)             # noqa: E731
        by_meta = lambda: tensorfs.open_meta(reply)    # noqa: E731
        o, c = tfs_rounds(a.n, WARMUP, by_path)
        results["tfs warm"] = o
        tib.row("tensorfs: open -> torch.from_dlpack -> data_ptr, warm (one open held)", o)
        tib.row("tensorfs: del tensor + close, warm", c)
        o, c = tfs_rounds(a.n, WARMUP, by_meta)
        results["meta warm"] = o
        tib.row("tensorfs: from metadata in hand (queue get reply) -> torch.from_dlpack -> "
                "data_ptr, warm (one open held)", o)
        tib.row("tensorfs: del tensor + close, warm (from metadata)", c)
        o, c = tfs_rounds(a.n, WARMUP, by_meta, capsule=True)
        results["capsule warm"] = o
        tib.row("tensorfs: from metadata in hand -> torch.from_dlpack(t.__dlpack__()) -> "
                "data_ptr, warm (the capsule: no stream lookup)", o)
        # Where the warm round's time goes: the library through ctypes, then torch.
        held = tensorfs.open_meta(reply)

        def part(fn, n):
            v = []
            for i in range(n + WARMUP):
                t0 = clock()
                fn()
                t1 = clock()
                if i >= WARMUP:
                    v.append(t1 - t0)
            return v

        tib.row("breakdown, warm: tensorfs.open_meta(reply) + close (no torch)",
                part(lambda: by_meta().close(), a.n))
        tib.row("breakdown, warm: torch.from_dlpack(t) -> data_ptr, t open",
                part(lambda: torch.from_dlpack(held).data_ptr(), a.n))
        tib.row("breakdown, warm: torch.from_dlpack(t.__dlpack__()) -> data_ptr (the capsule: "
                "no stream lookup)", part(lambda: torch.from_dlpack(held.__dlpack__()).data_ptr(),
                                          a.n))
        tib.row("breakdown, warm: torch.cuda.current_stream('cuda:0') (what from_dlpack(t) "
                "asks first)", part(lambda: torch.cuda.current_stream("cuda:0"), a.n))
        held.close()
        del keep_view
        keep.close()
        gc.collect()
        time.sleep(0.2)
        o, c = tfs_rounds(a.cold, WARMUP // 10, by_path, "by path cold")
        results["tfs cold"] = o
        tib.row("tensorfs: open -> torch.from_dlpack -> data_ptr, cold (nothing held)", o)
        tib.row("tensorfs: del tensor + close, cold (closes the IPC handle)", c)
        o, c = tfs_rounds(a.cold, WARMUP // 10, by_meta, "from metadata cold")
        results["meta cold"] = o
        tib.row("tensorfs: from metadata in hand (queue get reply) -> torch.from_dlpack -> "
                "data_ptr, cold (opens the IPC handle)", o)
        tib.row("tensorfs: del tensor + close, cold, from metadata (closes the IPC handle)", c)
        o, c = tfs_rounds(a.cold, WARMUP // 10, by_meta, "from metadata cold, capsule", True)
        results["capsule cold"] = o
        tib.row("tensorfs: from metadata in hand -> torch.from_dlpack(t.__dlpack__()) -> "
                "data_ptr, cold (the capsule: no stream lookup)", o)
        # A process's first open of each tensor: nothing about it remembered yet.
        firsts = [m.path("f%d" % i) for i in range(a.first + WARMUP // 10)]
        for f in firsts:
            tensorfs.create(f, "float32", [a.bytes // 4]).close()
        it = iter(firsts)
        o, c = tfs_rounds(a.first, WARMUP // 10, lambda: tensorfs.open(next(it)),
                          "by path, first open")
        results["first cold"] = o
        tib.row("tensorfs: open -> torch.from_dlpack -> data_ptr, a tensor this process never "
                "opened (first open)", o)
        tib.row("tensorfs: del tensor + close, after the first open", c)
        for f in firsts:
            tensorfs.rm(f)
        fo, io, cl, tot = split_rounds(a.cold, WARMUP // 10)
        tib.row("breakdown, by path cold: os.open(path) (the FUSE OPEN)", fo)
        tib.row("breakdown, by path cold: then open_meta -> from_dlpack -> data_ptr (IPC open)",
                io)
        tib.row("breakdown, by path cold: the two together", tot)
        tib.row("breakdown, by path cold: del + close + os.close", cl)

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
        tails.append(("torch cold", o, []))
        tib.row("torch: rebuild_cuda_tensor -> data_ptr, cold (opens the IPC handle)", o)
        tib.row("torch: del tensor, cold (closes the IPC handle)", c)
        gc.enable()
        here.send("done")
        prod.join(60)

        with tensorfs.connect(m.url) as qc:
            qc.delete("w")                      # the get's hold

        print("\nTails of the cold series: max, rounds over 1 ms (when: ms from the start)")
        for label, v, slow in tails:
            print("- %s: max %.1f µs, %d over 1 ms%s" % (
                label, max(v) / 1e3, sum(1 for x in v if x > 1000000),
                (": " + "; ".join(slow[:12])) if slow else ""))
        for what, key in (("by path", "tfs"), ("from metadata in hand", "meta"),
                          ("from metadata in hand, capsule", "capsule"),
                          ("by path, first open", "first")):
            verdict = []
            for kind in ("warm", "cold"):
                if key + " " + kind not in results:
                    continue
                f, t = sorted(results[key + " " + kind]), sorted(results["torch " + kind])
                for q in (0.50, 0.99):
                    fv, tv = tib.pct(f, q) / 1e3, tib.pct(t, q) / 1e3
                    verdict.append("%s p%d %s (%.1f vs %.1f µs)" % (
                        kind, int(q * 100), "faster" if fv < tv else "NOT faster", fv, tv))
            print("\ntensorfs (%s) vs torch: %s" % (what, "; ".join(verdict)))
    finally:
        problems = m.stop()
        if a.log:
            shutil.copy(m.log, os.path.join(a.log, "py_open_bench.daemon.log"))
        if problems:
            print("py_open_bench: " + "; ".join(problems), file=sys.stderr)


if __name__ == "__main__":
    main()
