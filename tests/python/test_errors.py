"""Hostile input to tensorfs.open and Tensor: clear exceptions carrying errno and the
library's message, nothing changed."""
import errno
import os

import pytest

import tensorfs
from conftest import wait_until


def test_open_missing(mnt):
    with pytest.raises(FileNotFoundError) as e:
        tensorfs.open(mnt.path("nope"))
    err = e.value
    assert isinstance(err, tensorfs.Error) and isinstance(err, OSError)
    assert err.errno == errno.ENOENT and err.filename == mnt.path("nope")
    assert err.strerror and "nope" in str(err)


def test_open_not_a_tensor(mnt, tmp_path):
    (tmp_path / "plain").write_bytes(b"x")
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.open(tmp_path / "plain")
    assert e.value.errno in (errno.ENOTSUP, errno.EOPNOTSUPP)
    assert e.value.strerror != os.strerror(e.value.errno), "the library's own sentence"
    os.mkdir(mnt.path("d"))
    with pytest.raises(IsADirectoryError):
        tensorfs.open(mnt.path("d"))


def test_open_bad_arguments(mnt):
    tensorfs.create(mnt.path("t"), "u8", [4]).close()
    for mode in ("w", "rb", "", None):
        with pytest.raises(ValueError):
            tensorfs.open(mnt.path("t"), mode)
    with pytest.raises(ValueError):
        tensorfs.open(mnt.path("t") + "\0x")
    with pytest.raises(TypeError):
        tensorfs.open(42.0)
    assert wait_until(lambda: mnt.refcount("t") == 1)


def test_read_only_and_ranges(mnt):
    tensorfs.create(mnt.path("t"), "u8", [8]).close()
    with tensorfs.open(mnt.path("t")) as t:
        with pytest.raises(tensorfs.Error) as e:
            t.write(b"abc")
        assert e.value.errno == errno.EBADF and "read-only" in e.value.strerror
        with pytest.raises(tensorfs.Error) as e:
            t.read(4, 5)
        assert e.value.errno == errno.EINVAL
        with pytest.raises(ValueError):
            t.read(-1)
        assert t.read(8) == b""
    with tensorfs.open(mnt.path("t"), "r+") as t:
        with pytest.raises(tensorfs.Error):
            t.write(b"123456789")
        with pytest.raises(ValueError):
            t.write(memoryview(bytearray(16))[::2])
        assert t.write(b"") == 0
        assert t.write(bytearray(b"xy"), 6) == 2
        assert t.read() == b"\0" * 6 + b"xy"


def test_dlpack_device_and_copy_requests(mnt):
    tensorfs.create(mnt.path("t"), "f32", [2]).close()
    with tensorfs.open(mnt.path("t")) as t:
        with pytest.raises(BufferError):
            t.__dlpack__(copy=True)
        with pytest.raises(BufferError):
            t.__dlpack__(dl_device=(2, 0))
        cap = t.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False, stream=None)
        del cap
    assert wait_until(lambda: mnt.refcount("t") == 1)


def test_tensor_removed_while_open(mnt):
    tensorfs.create(mnt.path("t"), "u8", [4]).close()
    t = tensorfs.open(mnt.path("t"), "r+")
    os.unlink(mnt.path("t"))
    t.write(b"abcd")                          # still mapped: the open file holds it
    assert t.read() == b"abcd"
    t.close()
