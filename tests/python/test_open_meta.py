"""tensorfs.open_meta: mapping a tensor from metadata in hand (a queue get reply, the
user.tensor.meta text, info()'s dict), without the mount."""
import errno
import json
import os
import socket

import numpy
import pytest

import tensorfs
from conftest import wait_until


def publish(mnt, name, a):
    tensorfs.publish(mnt.path(name), a).close()
    return mnt.path(name)


def raw_meta(p):
    return os.getxattr(p, "user.tensor.meta")


def test_from_the_xattr_text_bytes_and_str(mnt):
    a = numpy.arange(12, dtype=numpy.int32).reshape(3, 4)
    p = publish(mnt, "w", a)
    raw = raw_meta(p)
    for meta in (raw, raw.decode()):
        with tensorfs.open_meta(meta) as t:
            assert (t.dtype, t.shape, t.nbytes, t.device) == ("int32", (3, 4), 48, "cpu")
            assert t.path is None and t.writable
            assert numpy.array_equal(numpy.from_dlpack(t), a)


def test_from_info_dict_is_the_same_memory(mnt):
    a = numpy.zeros(8, dtype=numpy.float32)
    p = publish(mnt, "d", a)
    meta = tensorfs.info(p)
    assert meta["dtype"] == "float32"           # numpy's spelling: open_meta takes it back
    t = tensorfs.open_meta(meta)
    v = numpy.from_dlpack(t)
    t.write(numpy.full(8, 2.5, dtype=numpy.float32))
    with open(p, "rb") as f:
        assert f.read() == numpy.full(8, 2.5, dtype=numpy.float32).tobytes()
    with open(p, "r+b") as f:                    # a write through the file (FUSE)...
        f.write(numpy.arange(8, dtype=numpy.float32).tobytes())
    assert list(v) == list(range(8))            # ...is what the view holds: no copy
    t.close()
    assert list(v) == list(range(8)), "the array keeps the mapping after close"
    del v


def test_from_a_queue_get_reply(mnt):
    a = numpy.arange(6, dtype=numpy.float64)
    publish(mnt, "q", a)
    cmd = {"op": "get", "name": "q", "pid": os.getpid(), "node": socket.gethostname(),
           "id": "r1", "reply": "my:reply"}
    mnt.cli("lpush", "tensor_lifecycle", json.dumps(cmd))
    out = mnt.cli("brpop", "my:reply", "5").splitlines()
    assert len(out) == 2, "no reply from the queue: %r" % (out,)
    reply = json.loads(out[1])
    assert reply["ok"] is True and reply["id"] == "r1"
    with tensorfs.open_meta(out[1]) as t:       # the reply as it came, id and ok included
        assert t.shape == (6,) and numpy.array_equal(numpy.from_dlpack(t), a)
    with tensorfs.connect(mnt.url) as c:
        c.delete("q")                           # this process's hold
    assert wait_until(lambda: mnt.refcount("q") == 1)


def test_holds_no_reference(mnt):
    p = publish(mnt, "n", numpy.ones(4, dtype=numpy.uint8))
    assert wait_until(lambda: mnt.refcount("n") == 1)
    t = tensorfs.open_meta(raw_meta(p))
    assert wait_until(lambda: mnt.refcount("n") == 1), "open_meta asks nothing of the daemon"
    t.close()


@pytest.mark.parametrize("bad", [b"", b"{", b"[]", b"null", b'{"dtype":"f32"}',
                                 b'{"dtype":"f32","shape":[2],"bytes":8}\0junk',
                                 "\u00e9\u00e9"])
def test_malformed_is_ebadmsg(mnt, bad):
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.open_meta(bad)
    assert e.value.errno == errno.EBADMSG


def test_tampered_handle_and_shape(mnt):
    p = publish(mnt, "h", numpy.ones(16, dtype=numpy.uint8))
    meta = json.loads(raw_meta(p))
    bad = dict(meta, ipc_handle="zz" * 64)
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.open_meta(bad)
    assert e.value.errno == errno.EBADMSG
    # A shape that disagrees with bytes must not map past the tensor.
    big = dict(meta, shape=[1 << 40], shape_text="[%d]" % (1 << 40))
    with pytest.raises(tensorfs.Error):
        tensorfs.open_meta(big)


def test_freed_tensor_is_estale(mnt):
    p = publish(mnt, "f", numpy.ones(1 << 20, dtype=numpy.uint8))
    raw = raw_meta(p)
    os.unlink(p)
    assert wait_until(lambda: mnt.cli("keys", "tensorfs:unlinked:*").strip() == "")
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.open_meta(raw)
    assert e.value.errno == errno.ESTALE


def test_wrong_types(mnt):
    for bad in (None, 17, ["x"], object()):
        with pytest.raises(TypeError):
            tensorfs.open_meta(bad)
    with pytest.raises(ValueError):
        tensorfs.open_meta({"dtype": "float31", "shape": [1]})
    with pytest.raises(TypeError):
        tensorfs.open_meta({"dtype": "f32", "shape": [object()]})
