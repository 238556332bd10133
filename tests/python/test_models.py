"""Model directories through tensorfs.load/save, connect()'s node, Tensor.numpy()."""
import errno
import os
import subprocess
import sys

import numpy
import pytest

import tensorfs

from conftest import ROOT

LOAD = os.path.join(ROOT, "tests", "integration", "load")


def make_model(d, *args):
    subprocess.run([sys.executable, os.path.join(LOAD, "hf_make.py"), d] + list(args), check=True)


def compare(mode, a, b):
    r = subprocess.run([sys.executable, os.path.join(LOAD, "hf_cmp.py"), mode, a, b],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_load_save_model_dir(mnt, tmp_path):
    src, out = str(tmp_path / "src"), str(tmp_path / "out")
    make_model(src, "3", "3")
    assert tensorfs.load(src, mnt.path("m")) is None
    compare("tensors", src, mnt.path("m"))
    with open(mnt.path("m/config.json"), "rb") as f, open(os.path.join(src, "config.json"), "rb") as g:
        assert f.read() == g.read()
    with pytest.raises(FileExistsError):
        tensorfs.load(src, mnt.path("m"))
    tensorfs.save(mnt.path("m"), out)
    compare("dirs", src, out)


def test_load_merge(mnt, tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    make_model(a, "1", "2")
    os.mkdir(b)
    subprocess.run([sys.executable, os.path.join(LOAD, "st_make.py"),
                    os.path.join(b, "adapter.safetensors"), "2", "lora.a:F32:4"], check=True)
    tensorfs.load(a, mnt.path("m"))
    tensorfs.load(b, mnt.path("m"), merge=True)
    assert tensorfs.info(mnt.path("m/lora.a"))["shape"] == [4]
    with pytest.raises(FileExistsError):
        tensorfs.load(b, mnt.path("m"), merge=True)


def test_load_duplicate_key_makes_nothing(mnt, tmp_path):
    d = str(tmp_path / "dup")
    make_model(d, "1", "3", "--dup")
    with pytest.raises(FileExistsError) as e:
        tensorfs.load(d, mnt.path("m"))
    assert "model.embed_tokens.weight" in str(e.value)
    assert not os.path.exists(mnt.path("m"))


def test_connect_finds_the_mounts_node(mount_factory, monkeypatch):
    m = mount_factory("--node", "elsewhere-7")
    monkeypatch.delenv("TENSORFS_NODE", raising=False)
    monkeypatch.delenv("TENSORFS_MOUNT", raising=False)
    assert tensorfs.mount_node(m.dir) == "elsewhere-7"
    os.mkdir(m.path("sub"))
    assert tensorfs.mount_node(m.path("sub")) == "elsewhere-7"
    # the host name is not the daemon's node: a hold it cannot check is refused
    with tensorfs.connect(m.url) as c:
        with pytest.raises(OSError) as e:
            c.create("a", "float32", [4])
        assert e.value.errno == errno.EHOSTDOWN
    with tensorfs.connect(m.url, mount=m.dir) as c:
        t = c.create("b", "float32", [4])
        t.close()
        c.delete("b")
    monkeypatch.setenv("TENSORFS_MOUNT", m.dir)
    with tensorfs.connect(m.url) as c:
        c.create("c", "float32", [4]).close()
    monkeypatch.delenv("TENSORFS_MOUNT")
    monkeypatch.setenv("TENSORFS_NODE", "elsewhere-7")
    with tensorfs.connect(m.url) as c:
        c.create("d", "float32", [4]).close()


def test_mount_node_off_the_mount(tmp_path):
    with pytest.raises(OSError) as e:
        tensorfs.mount_node(str(tmp_path))
    assert e.value.errno == errno.ENOTSUP


def test_numpy_writable_view(mnt):
    p = mnt.path("w")
    tensorfs.publish(p, numpy.arange(6, dtype="float32").reshape(2, 3)).close()
    t = tensorfs.open(p, "r+")
    a = t.numpy()
    assert a.shape == (2, 3) and a.dtype == numpy.float32
    assert a.flags.writeable
    a[1, 2] = 42.0                       # straight into the tensor's memory
    t.close()
    a[0, 0] = -1.0                       # still mapped after close(): the array holds it
    with open(p, "rb") as f:
        got = numpy.frombuffer(f.read(), dtype="float32")
    assert got.tolist() == [-1.0, 1, 2, 3, 4, 42.0]
    del a
    with tensorfs.open(p) as r:
        v = r.numpy()
        assert not v.flags.writeable
        with pytest.raises(ValueError):
            v[0, 0] = 1.0
        assert v[1, 2] == 42.0


def test_numpy_no_dtype(mnt):
    with tensorfs.create(mnt.path("h"), "bfloat16", [2]) as t:
        with pytest.raises(TypeError):
            t.numpy()
