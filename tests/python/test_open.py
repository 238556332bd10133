"""tensorfs.open: attributes, DLPack views for numpy, references held by arrays."""
import errno
import gc
import os
import time

import numpy
import pytest

import tensorfs
from conftest import wait_until


def used_bytes(mnt):
    st = os.statvfs(mnt.dir)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def make(mnt, name, dtype, shape, data=None):
    p = mnt.path(name)
    with open(p, "wb"):
        pass
    os.setxattr(p, "user.tensor.dtype", dtype.encode())
    os.setxattr(p, "user.tensor.shape", shape.encode())
    if data is not None:
        with open(p, "r+b") as f:
            f.write(data)
    return p


def test_open_attributes_and_numpy_view(mnt):
    a = numpy.arange(24, dtype=numpy.float32).reshape(2, 3, 4)
    p = make(mnt, "w", "f32", "[2,3,4]", a.tobytes())
    with tensorfs.open(p) as t:
        assert (t.dtype, t.shape, t.ndim, t.nbytes) == ("float32", (2, 3, 4), 3, 96)
        assert t.device == "cpu" and t.__dlpack_device__() == (1, 0)
        assert not t.writable and t.path == p
        v = numpy.from_dlpack(t)
        assert v.dtype == numpy.float32 and v.shape == (2, 3, 4)
        assert numpy.array_equal(v, a)
        assert t.read(4, 8) == a.tobytes()[4:12]
    assert t.closed


def test_numpy_view_is_the_tensor_memory(mnt):
    p = make(mnt, "x", "i32", "[8]")
    with tensorfs.open(p, "r+") as t:
        v = numpy.from_dlpack(t)
        with open(p, "r+b") as f:            # a write through the file (FUSE)...
            f.write(numpy.arange(8, dtype=numpy.int32).tobytes())
        assert list(v) == list(range(8))      # ...is what the view holds: no copy
        t.write(numpy.full(8, 7, dtype=numpy.int32))
        with open(p, "rb") as f:
            assert f.read() == numpy.full(8, 7, dtype=numpy.int32).tobytes()


def test_array_keeps_the_reference_after_close(mnt):
    p = make(mnt, "r", "u8", "[16]", bytes(range(16)))
    assert wait_until(lambda: mnt.refcount("r") == 1)
    t = tensorfs.open(p)
    assert wait_until(lambda: mnt.refcount("r") == 2)
    v = numpy.from_dlpack(t)
    t.close()
    time.sleep(0.3)                            # a release would reach the daemon by now
    assert mnt.refcount("r") == 2, "the array holds the tensor open"
    os.unlink(p)                               # the memory outlives its name while held
    assert list(v) == list(range(16))
    assert used_bytes(mnt) > 0
    del v
    gc.collect()
    assert wait_until(lambda: used_bytes(mnt) == 0), "memory freed when the view went"


def test_last_array_gone_releases(mnt):
    p = make(mnt, "q", "u8", "[16]")
    t = tensorfs.open(p)
    views = [numpy.from_dlpack(t) for _ in range(3)]
    t.close()
    views.pop()
    views.pop()
    assert wait_until(lambda: mnt.refcount("q") == 2)
    views.pop()
    gc.collect()
    assert wait_until(lambda: mnt.refcount("q") == 1), "refcount back to 1 after the last view"


def test_unconsumed_capsule_releases(mnt):
    p = make(mnt, "c", "u8", "[4]")
    t = tensorfs.open(p)
    cap = t.__dlpack__()
    t.close()
    assert wait_until(lambda: mnt.refcount("c") == 2)
    del cap
    assert wait_until(lambda: mnt.refcount("c") == 1)


def test_closed_tensor_refuses(mnt):
    p = make(mnt, "z", "u8", "[4]")
    t = tensorfs.open(p)
    t.close()
    t.close()                                   # idempotent
    with pytest.raises(ValueError):
        t.__dlpack__()
    with pytest.raises(ValueError):
        t.read()
    assert "closed" in repr(t)


def test_dtypes_round_trip_through_dlpack(mnt):
    for short, np_name in (("u8", "uint8"), ("i8", "int8"), ("u16", "uint16"),
                           ("i16", "int16"), ("u32", "uint32"), ("i64", "int64"),
                           ("u64", "uint64"), ("f16", "float16"), ("f64", "float64")):
        p = make(mnt, "d_" + short, short, "[3]")
        with tensorfs.open(p) as t:
            assert t.dtype == np_name
            assert numpy.from_dlpack(t).dtype == numpy.dtype(np_name)


def test_refused_capsule_is_released(mnt):
    # numpy has no bfloat16: it refuses the capsule, which is freed with numpy's
    # exception pending; the exception must come through and the reference go.
    p = make(mnt, "bf", "bf16", "[4]")
    t = tensorfs.open(p)
    assert t.dtype == "bfloat16"
    with pytest.raises(Exception) as e:
        numpy.from_dlpack(t)
    assert not isinstance(e.value, SystemError), repr(e.value)
    t.close()
    gc.collect()
    assert wait_until(lambda: mnt.refcount("bf") == 1)


def test_fp8_dlpack_codes(mnt):
    """fp8 goes out with DLPack 1.1's codes: kDLFloat8_e4m3fn (10), kDLFloat8_e5m2 (12)."""
    import ctypes
    from tensorfs import _dlpack
    for name, dt, code in (("f8a", "f8e4m3", 10), ("f8b", "f8e5m2", 12)):
        p = make(mnt, name, dt, "[4]")
        with tensorfs.open(p) as t:
            cap = t.__dlpack__()
            m = ctypes.cast(_dlpack._GetPointer(cap, b"dltensor"),
                            ctypes.POINTER(_dlpack.DLManagedTensor)).contents
            d = m.dl_tensor.dtype
            assert (d.code, d.bits, d.lanes, m.dl_tensor.ndim) == (code, 8, 1, 1)
            del cap                     # unconsumed: its destructor runs the deleter
            assert t.read() == bytes(4)
    gc.collect()
    assert wait_until(lambda: mnt.refcount("f8a") == 1)
