#!/usr/bin/env python3
"""Opens a tensorfs tensor with CuPy from its xattrs and hands it to PyTorch via DLPack.

    python3 examples/dlpack_torch.py /mnt/tensors/x

Needs a GPU, the cuda backend in its default memory mode (legacy IPC handles), CuPy and
PyTorch; otherwise prints "skip - ..." and exits 0. A mount run with --memory vmm hands
out no such handle (user.tensor.handle_type "posix_fd": the memory is a descriptor from the
daemon's handle socket, docs/vmm.md): tensorfs.open(path) and torch.from_dlpack map
either kind. (The C library's tfs_to_dlpack does the same for C programs.)
"""
import json
import os
import sys

DTYPES = {"bool": "bool", "u8": "uint8", "i8": "int8", "u16": "uint16", "i16": "int16",
          "u32": "uint32", "i32": "int32", "u64": "uint64", "i64": "int64",
          "f16": "float16", "f32": "float32", "f64": "float64"}


def skip(why):
    print("skip - dlpack_torch.py: " + why)
    sys.exit(0)


def main():
    if len(sys.argv) != 2:
        print("usage: dlpack_torch.py TENSOR_PATH", file=sys.stderr)
        return 2
    path = sys.argv[1]
    # The open file is our reference: the tensor lives while it is open.
    fd = os.open(path, os.O_RDONLY)
    meta = json.loads(os.getxattr(fd, "user.tensor.meta"))
    if meta.get("backend") != "cuda":
        skip("the tensor is on the %s backend, not on a GPU" % meta.get("backend"))
    try:
        handle_type = os.getxattr(fd, "user.tensor.handle_type")
    except OSError:              # no memory yet: no handle of either kind
        handle_type = b""
    if handle_type == b"posix_fd":
        skip("not in --memory vmm: the tensor's memory comes from the handle socket "
             "(handle_type posix_fd), not from a legacy IPC handle that "
             "cudaIpcOpenMemHandle opens; tensorfs.open maps it")
    if meta["dtype"] not in DTYPES:
        skip("dtype %s has no numpy equivalent" % meta["dtype"])
    try:
        import cupy
        import torch
    except ImportError as e:
        skip("needs cupy and torch (%s)" % e)
    if not torch.cuda.is_available():
        skip("no CUDA device")
    handle = os.getxattr(fd, "user.tensor.ipc_handle")
    offset = int(meta["ipc_offset"])
    nbytes = int(meta["bytes"])
    shape = json.loads(meta["shape_text"])
    with cupy.cuda.Device(int(meta["device"])):
        base = cupy.cuda.runtime.ipcOpenMemHandle(handle)
        try:
            mem = cupy.cuda.UnownedMemory(base + offset, nbytes, owner=None)
            arr = cupy.ndarray(shape, dtype=DTYPES[meta["dtype"]],
                               memptr=cupy.cuda.MemoryPointer(mem, 0))
            t = torch.from_dlpack(arr)          # no copy: same device memory
            assert t.data_ptr() == base + offset
            print("torch tensor %s %s on %s, sum %s" % (tuple(t.shape), t.dtype, t.device,
                                                        t.double().sum().item()))
            del t, arr, mem
            cupy.cuda.runtime.deviceSynchronize()
        finally:
            cupy.cuda.runtime.ipcCloseMemHandle(base)
    os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
