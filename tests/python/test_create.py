"""tensorfs.create and tensorfs.publish: new tensors from a dtype and shape, or from an
array's bytes; bad input changes nothing."""
import errno
import os

import numpy
import pytest

import tensorfs
from conftest import wait_until


@pytest.mark.parametrize("dtype,short,size", [
    ("float32", "f32", 4), ("bfloat16", "bf16", 2), ("torch.float16", "f16", 2),
    ("f64", "f64", 8), (numpy.dtype("int16"), "i16", 2), (numpy.uint8, "u8", 1),
    ("float8_e4m3fn", "f8e4m3", 1), ("float8_e5m2", "f8e5m2", 1), ("bool", "bool", 1)])
def test_create_dtype_names(mnt, dtype, short, size):
    p = mnt.path("t")
    with tensorfs.create(p, dtype, (3, 5)) as t:
        assert t.shape == (3, 5) and t.nbytes == 15 * size and t.writable
        assert t.read() == bytes(15 * size), "new memory reads as zeros"
    assert os.getxattr(p, "user.tensor.dtype").decode() == short
    meta = tensorfs.info(p)
    assert meta["shape"] == [3, 5] and meta["bytes"] == 15 * size
    assert meta["dtype"] == tensorfs.open(p).dtype


def test_create_scalar_and_empty(mnt):
    with tensorfs.create(mnt.path("s"), "float64", ()) as t:
        assert t.shape == () and t.nbytes == 8
        assert numpy.from_dlpack(t).shape == ()
    with tensorfs.create(mnt.path("e"), "float32", [0, 4]) as t:
        assert t.shape == (0, 4) and t.nbytes == 0 and t.data_ptr == 0
        assert numpy.from_dlpack(t).shape == (0, 4)


def test_create_existing_name_is_refused(mnt):
    p = mnt.path("x")
    tensorfs.create(p, "u8", [4]).write(b"abcd")
    with pytest.raises(FileExistsError) as e:
        tensorfs.create(p, "f32", [100])
    assert isinstance(e.value, tensorfs.Error) and e.value.errno == errno.EEXIST
    assert e.value.filename == p
    with open(p, "rb") as f:
        assert f.read() == b"abcd", "the existing tensor is unchanged"


@pytest.mark.parametrize("dtype,shape,exc", [
    ("float99", [2], ValueError), ("f32", [2, -1], ValueError), ("f32", "2,3", TypeError),
    ("f32", [2.5], TypeError), ("f32", [1] * 17, ValueError), (None, [2], ValueError),
    ("f32", [True], TypeError)])
def test_create_bad_input_leaves_nothing(mnt, dtype, shape, exc):
    with pytest.raises(exc):
        tensorfs.create(mnt.path("bad"), dtype, shape)
    assert tensorfs.ls(mnt.dir) == []


def test_create_too_large_leaves_nothing(mount_factory):
    m = mount_factory("--max-bytes", "1M")
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.create(m.path("big"), "f32", [1024, 1024])
    assert e.value.errno in (errno.ENOSPC, errno.EFBIG), e.value
    assert "big" in str(e.value)
    assert tensorfs.ls(m.dir) == []


def test_create_bad_device(mnt):
    with pytest.raises(ValueError):
        tensorfs.create(mnt.path("d"), "f32", [2], device=-1)
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.create(mnt.path("d"), "f32", [2], device=77)
    assert e.value.errno in (errno.EINVAL, errno.ENODEV), e.value
    assert tensorfs.ls(mnt.dir) == []


@pytest.mark.parametrize("array", [
    numpy.arange(12, dtype=numpy.float32).reshape(3, 4),
    numpy.arange(7, dtype=numpy.int64),
    numpy.array(3.5),
    numpy.zeros((2, 0), dtype=numpy.uint16),
    numpy.linspace(0, 1, 1000, dtype=numpy.float16).reshape(10, 10, 10)],
    ids=["f32-2d", "i64", "scalar", "empty", "f16-3d"])
def test_publish_numpy(mnt, array):
    p = mnt.path("pub")
    t = tensorfs.publish(p, array)
    assert t.shape == array.shape and t.dtype == array.dtype.name
    t.close()
    with open(p, "rb") as f:
        assert f.read() == array.tobytes(), "the file holds the array's bytes"
    with tensorfs.open(p) as t:
        assert numpy.array_equal(numpy.from_dlpack(t), array)
    assert wait_until(lambda: mnt.refcount("pub") == 1)


def test_publish_is_a_copy(mnt):
    a = numpy.ones(4, dtype=numpy.float32)
    tensorfs.publish(mnt.path("c"), a).close()
    a[:] = 5
    with tensorfs.open(mnt.path("c")) as t:
        assert list(numpy.from_dlpack(t)) == [1, 1, 1, 1]


def test_publish_sliced_view_with_offset(mnt):
    base = numpy.arange(20, dtype=numpy.int32)
    view = base[5:9]                         # data pointer inside base: byte offset
    tensorfs.publish(mnt.path("v"), view).close()
    with tensorfs.open(mnt.path("v")) as t:
        assert list(numpy.from_dlpack(t)) == [5, 6, 7, 8]


def test_publish_read_only_array_and_buffers(mnt):
    a = numpy.arange(10, dtype=numpy.int16).reshape(2, 5)
    a.flags.writeable = False                  # numpy < 2 refuses to export it by DLPack
    with tensorfs.publish(mnt.path("ro"), a) as t:
        assert (t.dtype, t.shape) == ("int16", (2, 5))
        assert numpy.array_equal(numpy.from_dlpack(t), a)
    with tensorfs.publish(mnt.path("b"), b"\x01\x02\x03") as t:
        assert (t.dtype, t.shape, t.read()) == ("uint8", (3,), b"\x01\x02\x03")
    import array
    with tensorfs.publish(mnt.path("d"), array.array("d", [1.5, 2.5])) as t:
        assert (t.dtype, t.shape) == ("float64", (2,))
        assert list(numpy.from_dlpack(t)) == [1.5, 2.5]
    with pytest.raises(ValueError):
        tensorfs.publish(mnt.path("big-endian"), numpy.arange(3, dtype=">i4"))
    assert tensorfs.ls(mnt.dir) == ["b", "d", "ro"]


def test_publish_bad_input_leaves_nothing(mnt):
    with pytest.raises(TypeError):
        tensorfs.publish(mnt.path("n"), [1, 2, 3])
    with pytest.raises(ValueError):
        tensorfs.publish(mnt.path("n"), numpy.arange(12, dtype=numpy.float32).reshape(3, 4).T)
    with pytest.raises(ValueError):
        tensorfs.publish(mnt.path("n"), numpy.zeros(3, dtype=numpy.complex64))
    assert tensorfs.ls(mnt.dir) == []
    tensorfs.publish(mnt.path("n"), numpy.zeros(3)).close()
    with pytest.raises(FileExistsError):
        tensorfs.publish(mnt.path("n"), numpy.ones(5))
    assert tensorfs.info(mnt.path("n"))["shape"] == [3]


def test_publish_outside_a_mount_is_refused(tmp_path):
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.publish(tmp_path / "x", numpy.zeros(3))
    assert not os.path.exists(tmp_path / "x")
    assert e.value.errno in (errno.ENOTSUP, errno.EOPNOTSUPP), e.value
