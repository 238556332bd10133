"""tensorfs.connect: create/get/delete through the Redis lifecycle queue."""
import errno
import os
import socket

import numpy
import pytest

import tensorfs
from conftest import wait_until


def holders(mnt, name):
    keys = mnt.cli("hkeys", "tensorfs:tensor:" + name).split()
    return [k for k in keys if k.startswith("holder:")]


def test_create_get_delete(mnt):
    with tensorfs.connect(mnt.url) as c:
        t = c.create("kv", "bfloat16", [4, 1024])
        assert (t.dtype, t.shape, t.nbytes, t.device) == ("bfloat16", (4, 1024), 8192, "cpu")
        assert os.path.getsize(mnt.path("kv")) == 8192
        assert holders(mnt, "kv") == ["holder:%s:%d" % (socket.gethostname(), os.getpid())]
        assert wait_until(lambda: mnt.refcount("kv") == 2)
        t.write(b"\x01\x02", 10)
        with open(mnt.path("kv"), "rb") as f:
            assert f.read()[10:12] == b"\x01\x02", "the queue's tensor is the file's memory"
        g = c.get("kv")
        assert g.read(10, 2) == b"\x01\x02"
        c.delete("kv")                      # this process's holds go first
        c.delete("kv")
        assert wait_until(lambda: mnt.refcount("kv") == 1) and holders(mnt, "kv") == []
        c.delete("kv")                      # then the name
        assert wait_until(lambda: not os.path.exists(mnt.path("kv")))
        t.close()
        g.close()


def test_get_gives_a_numpy_view(mnt):
    a = numpy.arange(6, dtype=numpy.float32)
    tensorfs.publish(mnt.path("w"), a).close()
    c = tensorfs.connect(mnt.url)
    with c.get("w") as t:
        assert numpy.array_equal(numpy.from_dlpack(t), a)
    c.delete("w")
    assert wait_until(lambda: mnt.refcount("w") == 1)
    c.close()
    c.close()
    with pytest.raises(ValueError):
        c.get("w")


def test_queue_errors(mnt):
    c = tensorfs.connect(mnt.url, queue="tensor_lifecycle")
    with pytest.raises(FileNotFoundError) as e:
        c.get("missing")
    assert isinstance(e.value, tensorfs.Error) and e.value.errno == errno.ENOENT
    c.create("x", "f32", [2]).close()
    with pytest.raises(FileExistsError):
        c.create("x", "f32", [2])
    with pytest.raises(FileNotFoundError):
        c.create("no/parent", "f32", [2])
    with pytest.raises(ValueError):
        c.create("y", "complex64", [2])
    with pytest.raises(ValueError):
        c.create("", "f32", [2])
    with pytest.raises(ValueError):
        c.get("a\0b")
    with pytest.raises(tensorfs.Error) as e:
        c.delete("missing")
    assert e.value.errno == errno.ENOENT
    assert sorted(tensorfs.ls(mnt.dir)) == ["x"]


def test_no_daemon_on_the_queue_times_out(mnt):
    c = tensorfs.connect(mnt.url, timeout_ms=300, queue="nobody_serves_this")
    with pytest.raises(TimeoutError) as e:
        c.create("t", "f32", [2])
    assert e.value.errno == errno.ETIMEDOUT and isinstance(e.value, tensorfs.Error)
    assert tensorfs.ls(mnt.dir) == []


def test_bad_urls(mnt, tmp_path):
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.connect("http://example")
    assert e.value.errno == errno.EINVAL and e.value.strerror
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.connect("unix://" + str(tmp_path / "no.sock"), timeout_ms=500)
    assert e.value.errno in (errno.ENOENT, errno.ECONNREFUSED)
    with pytest.raises(ValueError):
        tensorfs.connect(mnt.url, node="")


def test_password_not_in_errors(mnt, tmp_path):
    """A URL's password never reaches an error message (issue 32, item 4)."""
    bad = "unix://someone:Zq8pw-py-4711@" + str(tmp_path / "no.sock")
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.connect(bad, timeout_ms=500)
    assert "Zq8pw-py-4711" not in str(e.value) and "***" in str(e.value)
    assert tensorfs.client.redact_url("redis://u:p@h:1/2") == "redis://u:***@h:1/2"
    assert tensorfs.client.redact_url("redis://p@h") == "redis://***@h"
    assert tensorfs.client.redact_url("unix:///s") == "unix:///s"
    assert tensorfs.client.redact_url("unix://u:@/s") == "unix://u:@/s"


def test_lease_and_renew(mnt):
    """Client(lease=) and renew(): a client the daemon cannot see (it names another node,
    as a container or another machine does) holds through a lease that renew() extends;
    the refusals come back as the library's errnos."""
    with tensorfs.connect(mnt.url) as plain:
        plain.create("kv", "float32", [4]).close()
        plain.delete("kv")                  # its own hold: only the name stays
        with pytest.raises(tensorfs.Error) as e:
            plain.renew("kv")               # no lease set on this client
        assert e.value.errno == errno.EINVAL
    with pytest.raises(ValueError):
        tensorfs.connect(mnt.url, lease=86401)
    with tensorfs.connect(mnt.url, node="elsewhere") as c:
        with pytest.raises(tensorfs.Error) as e:
            c.get("kv")                     # unseen, without a lease: refused
        assert e.value.errno == errno.ESRCH
    with tensorfs.connect(mnt.url, node="elsewhere", lease=600) as c:
        with pytest.raises(tensorfs.Error) as e:
            c.renew("kv")                   # no hold yet
        assert e.value.errno == errno.ESRCH
        t = c.get("kv")
        held = holders(mnt, "kv")
        assert len(held) == 1, held
        c.renew("kv")
        assert holders(mnt, "kv") == held
        c.delete("kv")
        assert wait_until(lambda: holders(mnt, "kv") == [])
        t.close()


def test_release_buffers(mnt):
    tensorfs.release_buffers()          # nothing cached: a no-op
    src = os.path.join(mnt.tmp, "x.npy")
    numpy.save(src, numpy.arange(5, dtype=numpy.int32))
    tensorfs.load(src, mnt.path("x"))
    tensorfs.release_buffers()
    with tensorfs.open(mnt.path("x")) as t:
        assert list(t.numpy()) == [0, 1, 2, 3, 4]
