"""The host tier (docs/tiers.md) from Python: device="cpu" on create and through the
queue, Tensor.device "cpu", tensorfs.move of a tensor and of a directory, all or none."""
import errno
import os

import numpy
import pytest

import tensorfs


@pytest.fixture
def tiers(mount_factory):
    """A host-backend mount with the host tier and one stand-in device, 0: 32 MiB, cpu: 4 MiB."""
    return mount_factory("-o", "host_devices=1", "--max-bytes", "cpu:4M,0:32M")


def test_create_on_cpu(tiers):
    p = tiers.path("h")
    with tensorfs.create(p, "float32", (4, 4), device="cpu") as t:
        assert t.device == "cpu"
        assert t.on_host
    assert os.getxattr(p, "user.tensor.device") == b"cpu"
    assert tensorfs.info(p)["device"] == "cpu"
    with pytest.raises(ValueError):
        tensorfs.create(tiers.path("bad"), "u8", [1], device="gpu")
    assert not os.path.exists(tiers.path("bad"))


def test_queue_create_on_cpu(tiers):
    c = tensorfs.connect(tiers.url)
    try:
        t = c.create("q", "u8", [16], device="cpu")
        assert t.device == "cpu"
        t.close()
        c.delete("q")
    finally:
        c.close()
    assert os.getxattr(tiers.path("q"), "user.tensor.device") == b"cpu"


def test_move_directory_all_or_none(tiers):
    os.mkdir(tiers.path("m"))
    data = {}
    for i in range(3):
        a = numpy.random.default_rng(i).integers(0, 255, 1 << 20, dtype=numpy.uint8)
        tensorfs.publish(tiers.path("m/t%d" % i), a).close()
        data[i] = a.tobytes()
    tensorfs.move(tiers.path("m"), "cpu")
    for i in range(3):
        assert os.getxattr(tiers.path("m/t%d" % i), "user.tensor.device") == b"cpu"
    tensorfs.move(tiers.path("m"), 0)
    # 5 MiB do not fit the 4 MiB host tier: none moves.
    a = numpy.zeros(2 << 20, dtype=numpy.uint8)
    tensorfs.publish(tiers.path("m/big"), a).close()
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.move(tiers.path("m"), "cpu")
    assert e.value.errno == errno.ENOSPC
    for i in range(3):
        p = tiers.path("m/t%d" % i)
        assert os.getxattr(p, "user.tensor.device") == b"0"
        with tensorfs.open(p) as t:
            assert t.read() == data[i]
    with pytest.raises(ValueError):
        tensorfs.move(tiers.path("m"), None)
