"""CuPy consumer for tests/gpu/t_cupy.sh.
  cupy_consumer.py check FILE...   device bytes (handle + ipc_offset) == what read() returns
  cupy_consumer.py write FILE...   writes a pattern with CuPy, then read() must return it
Opens each handle the way docs/handles.md shows; one open per distinct handle (pooled tensors
share a block, and CUDA maps a block once per process)."""
import os, sys
import numpy as np
import cupy

mode, files = sys.argv[1], sys.argv[2:]
opened = {}
def devptr(path):
    h = os.getxattr(path, "user.tensor.ipc_handle")
    assert len(h) == 64, len(h)
    if h not in opened:
        opened[h] = cupy.cuda.runtime.ipcOpenMemHandle(h)
    return opened[h] + int(os.getxattr(path, "user.tensor.ipc_offset"))

def view(path):
    n = os.stat(path).st_size
    mem = cupy.cuda.UnownedMemory(devptr(path), n, None)
    return cupy.ndarray((n,), dtype=cupy.uint8, memptr=cupy.cuda.MemoryPointer(mem, 0))

bad = 0
for f in files:
    arr = view(f)
    if mode == "write":
        arr[:] = (cupy.arange(arr.size, dtype=cupy.uint64) * 7 + 3).astype(cupy.uint8)
        cupy.cuda.runtime.deviceSynchronize()
    with open(f, "rb") as fh:
        data = np.frombuffer(fh.read(), dtype=np.uint8)
    if not np.array_equal(cupy.asnumpy(arr), data):
        print(f"{f}: device bytes differ from read()"); bad += 1
    if mode == "write" and not np.array_equal(data, ((np.arange(data.size, dtype=np.uint64) * 7 + 3) % 256).astype(np.uint8)):
        print(f"{f}: read() does not return the CuPy write"); bad += 1
for p in opened.values():
    cupy.cuda.runtime.ipcCloseMemHandle(p)
print(f"{len(files)} files, {len(opened)} handles, {bad} bad")
sys.exit(1 if bad else 0)
