"""The Python package on the cuda backend (tests/gpu/t_python.sh runs these with
TFS_BACKEND=cuda): torch, CuPy and JAX through DLPack, zero-copy, across processes."""
import subprocess
import sys
import textwrap

import pytest

import tensorfs
from conftest import wait_until

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("torch sees no CUDA device", allow_module_level=True)


def expected(n=4096):
    return (torch.arange(n, device="cuda", dtype=torch.float32) * 0.25).to(torch.bfloat16)


def test_torch_view_is_zero_copy(mnt):
    p = mnt.path("w")
    src = torch.arange(1024, device="cuda", dtype=torch.float32)
    tensorfs.publish(p, src).close()
    with tensorfs.open(p, "r+") as t:
        assert t.device == "cuda:0" and t.__dlpack_device__() == (2, 0)
        x = torch.from_dlpack(t)
        assert x.is_cuda and x.data_ptr() == t.data_ptr, "a view, not a copy"
        assert torch.equal(x, src)
    x.mul_(3)                                   # in place, through torch, after close()
    torch.cuda.synchronize()
    with open(p, "rb") as f:                    # what read() of the file returns
        assert f.read() == (src * 3).cpu().numpy().tobytes()
    del x
    assert wait_until(lambda: mnt.refcount("w") == 1)


def test_view_dropped_while_its_kernels_are_queued(mnt):
    """The last release of a mapping (here the DLPack deleter of a view dropped at once)
    waits for the work queued on it: torch's kernel, queued behind a long one, must not
    meet an unmapped address (in --memory vmm it did: cuMemUnmap waits for nothing)."""
    p = mnt.path("queued")
    tensorfs.publish(p, torch.zeros(1024, device="cuda")).close()
    busy = torch.randn(2048, 2048, device="cuda")
    for _ in range(3):
        with tensorfs.open(p, "r+") as t:
            x = torch.from_dlpack(t)
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(100_000_000)       # cycles of spinning ahead of add_
        else:
            for _ in range(20):
                busy = busy @ busy
        x.add_(1)
        del x                                    # its last user: the mapping goes
        torch.cuda.synchronize()                 # an illegal address would raise here
    with open(p, "rb") as f:
        assert f.read() == torch.full((1024,), 3.0).numpy().tobytes()


def test_published_from_torch_opened_in_another_process(mnt):
    p = mnt.path("shared")
    producer = textwrap.dedent("""
        import sys, torch, tensorfs
        x = (torch.arange(4096, device="cuda", dtype=torch.float32) * 0.25).to(torch.bfloat16)
        tensorfs.publish(sys.argv[1], x).close()
    """)
    subprocess.run([sys.executable, "-c", producer, p], check=True, timeout=120)
    with tensorfs.open(p) as t:
        assert (t.dtype, t.shape) == ("bfloat16", (4096,))
        y = torch.from_dlpack(t)
    assert y.dtype == torch.bfloat16 and torch.equal(y, expected())
    # ...and the other way: this process writes through torch, another one reads the file.
    with tensorfs.open(p, "r+") as t:
        z = torch.from_dlpack(t)
    z.fill_(2.5)
    torch.cuda.synchronize()
    reader = "import sys; print(open(sys.argv[1], 'rb').read() == bytes.fromhex('2040') * 4096)"
    out = subprocess.run([sys.executable, "-c", reader, p], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "True", out


def test_publish_from_cpu_tensor_to_gpu_memory(mnt):
    src = torch.randn(64, 32)
    with tensorfs.publish(mnt.path("c"), src) as t:
        assert t.device == "cuda:0"
        assert torch.equal(torch.from_dlpack(t).cpu(), src)


def test_queue_get_gives_a_gpu_view(mnt):
    c = tensorfs.connect(mnt.url)
    t = c.create("q", "float16", [8, 8])
    x = torch.from_dlpack(t)
    x.fill_(1.5)
    torch.cuda.synchronize()
    with open(mnt.path("q"), "rb") as f:
        assert f.read() == torch.full((64,), 1.5, dtype=torch.float16).numpy().tobytes()
    del x
    t.close()
    c.delete("q")
    c.close()


def test_open_meta_from_a_producer_in_another_process(mnt):
    """The metadata handed over by the producer (its info() dict, as JSON through a
    pipe) maps the same GPU memory here, without the mount: an in-place change through
    torch is what read() of the file returns."""
    p = mnt.path("m")
    producer = textwrap.dedent("""
        import json, sys, torch, tensorfs
        x = (torch.arange(4096, device="cuda", dtype=torch.float32) * 0.25).to(torch.bfloat16)
        tensorfs.publish(sys.argv[1], x).close()
        print(json.dumps(tensorfs.info(sys.argv[1])))
    """)
    out = subprocess.run([sys.executable, "-c", producer, p], check=True, timeout=120,
                         capture_output=True, text=True)
    with tensorfs.open_meta(out.stdout.strip().splitlines()[-1]) as t:
        assert (t.dtype, t.shape, t.device, t.path) == ("bfloat16", (4096,), "cuda:0", None)
        y = torch.from_dlpack(t)
    assert torch.equal(y, expected())
    y.fill_(2.5)
    torch.cuda.synchronize()
    with open(p, "rb") as f:
        assert f.read() == bytes.fromhex("2040") * 4096
    del y
    assert wait_until(lambda: mnt.refcount("m") == 1), "open_meta holds no reference"


def test_cupy(mnt):
    cupy = pytest.importorskip("cupy")
    src = cupy.arange(100, dtype=cupy.int32)
    tensorfs.publish(mnt.path("cp"), src).close()
    with tensorfs.open(mnt.path("cp"), "r+") as t:
        a = cupy.from_dlpack(t)
    assert a.data.ptr != src.data.ptr and bool((a == src).all())
    a += 1
    cupy.cuda.runtime.deviceSynchronize()
    with open(mnt.path("cp"), "rb") as f:
        assert f.read() == (src + 1).get().tobytes()


def test_jax(mnt):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    src = torch.arange(256, device="cuda", dtype=torch.float32)
    tensorfs.publish(mnt.path("jx"), src).close()
    with tensorfs.open(mnt.path("jx")) as t:
        a = jax.dlpack.from_dlpack(t)
    assert a.shape == (256,) and bool(jnp.all(a == jnp.arange(256, dtype=jnp.float32)))
    assert "cuda" in str(a.devices()).lower() or "gpu" in str(a.devices()).lower()
    b = jnp.linspace(0, 1, 77, dtype=jnp.float32)
    with tensorfs.publish(mnt.path("jp"), b) as t:
        assert t.read() == bytes(memoryview(jax.device_get(b)))


def test_publish_fp8_from_torch(mnt):
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no float8_e4m3fn")
    src = torch.linspace(-4, 4, 64, device="cuda").to(torch.float8_e4m3fn)
    try:
        src.__dlpack__()
    except Exception as e:                  # noqa: BLE001 (whatever torch raises)
        pytest.skip("torch exports no fp8 through DLPack: %s" % e)
    with tensorfs.publish(mnt.path("f8"), src) as t:
        assert (t.dtype, t.shape) == ("float8_e4m3fn", (64,))
        assert t.read() == src.view(torch.uint8).cpu().numpy().tobytes()
    assert tensorfs.info(mnt.path("f8"))["dtype"] == "float8_e4m3fn"


def test_publish_numpy_read_only_to_gpu(mnt):
    numpy = pytest.importorskip("numpy")
    a = numpy.arange(12, dtype=numpy.float32).reshape(3, 4)
    a.flags.writeable = False              # numpy 2 exports it as a DLPack 1.x capsule
    with tensorfs.publish(mnt.path("ro"), a) as t:
        assert t.device == "cuda:0" and t.shape == (3, 4)
        assert torch.equal(torch.from_dlpack(t).cpu(), torch.from_numpy(a.copy()))
