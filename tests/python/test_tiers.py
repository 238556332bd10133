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


def test_dlpack_device_of_host_tier(mount_factory):
    """A host-tier tensor this process has not registered with CUDA is kDLCPU; asking for
    kDLCPU is granted; a preallocated tier's tensors (at offsets of a segment) map and read
    as any other."""
    m = mount_factory("-o", "host_devices=1", "--preallocate", "cpu:8M")
    a = numpy.arange(1 << 16, dtype=numpy.float32)
    tensorfs.publish(m.path("x"), a, device="cpu").close()
    tensorfs.publish(m.path("y"), a * 2, device="cpu").close()
    with tensorfs.open(m.path("y")) as t:
        assert t.device == "cpu"
        assert t.__dlpack_device__() == (1, 0)
        t.__dlpack__(dl_device=(1, 0))
        with pytest.raises(BufferError):
            t.__dlpack__(dl_device=(2, 0))
        assert numpy.array_equal(t.numpy(), a * 2)
    assert int(os.getxattr(m.path("y"), "user.tensor.ipc_offset")) > 0
