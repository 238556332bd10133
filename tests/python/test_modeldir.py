"""The parts of tensorfs.torch and tensorfs.transformers that need no torch: state-dict
keys from a directory of tensors, the small-file filter, a model directory's load into
tensorfs, and the lock that lets one of several racing processes load it."""
import json
import os
import struct
import subprocess
import sys
import textwrap

import numpy
import pytest

import tensorfs
import tensorfs.torch as tt
from tensorfs import _modeldir
from conftest import wait_until


def write_safetensors(path, tensors):
    """tensors: {key: numpy array}; the safetensors layout (8-byte header size, JSON
    header, data)."""
    names = {"float32": "F32", "int64": "I64", "float16": "F16", "uint8": "U8"}
    header, blobs, off = {}, [], 0
    for k, a in tensors.items():
        b = numpy.ascontiguousarray(a).tobytes()
        header[k] = {"dtype": names[a.dtype.name], "shape": list(a.shape),
                     "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def model_dir(d, index=True):
    """A two-shard model directory: {key: array} of everything in it."""
    os.makedirs(d, exist_ok=True)
    s1 = {"model.embed.weight": numpy.arange(12, dtype=numpy.float32).reshape(3, 4),
          "model.layers.0.w": numpy.full((2, 2), 7, dtype=numpy.float16)}
    s2 = {"lm_head.weight": numpy.arange(8, dtype=numpy.float32) / 3,
          "model.pos": numpy.arange(5, dtype=numpy.int64)}
    write_safetensors(os.path.join(d, "model-00001-of-00002.safetensors"), s1)
    write_safetensors(os.path.join(d, "model-00002-of-00002.safetensors"), s2)
    if index:
        wm = {k: "model-00001-of-00002.safetensors" for k in s1}
        wm.update({k: "model-00002-of-00002.safetensors" for k in s2})
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {}, "weight_map": wm}, f)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"architectures": ["LlamaForCausalLM"], "hidden_size": 4}, f)
    with open(os.path.join(d, "tokenizer.model"), "wb") as f:
        f.write(b"\x00\x01tok")
    return {**s1, **s2}


def test_small_file_filter():
    for n in ("config.json", "generation_config.json", "tokenizer.model", "merges.txt",
              "chat_template.jinja", "README.md", ".loading"):
        assert tt.is_small_file(n), n
    for n in ("model.layers.0.self_attn.q_proj.weight", "lm_head.weight", "w", "bias"):
        assert not tt.is_small_file(n), n


def test_keys_from_flat_and_nested_names(mnt):
    d = mnt.path("m")
    os.mkdir(d)
    os.mkdir(os.path.join(d, "model"))
    os.mkdir(os.path.join(d, "model", "norm"))
    for name in ("model.layers.0.self_attn.q_proj.weight", "lm_head.weight",
                 "model/norm/weight", "model/embed"):
        tensorfs.create(os.path.join(d, name), "float32", [2]).close()
    tensorfs.create(os.path.join(d, "config.json"), "u8", [3]).close()
    tensorfs.create(os.path.join(d, "tokenizer.model"), "u8", [3]).close()
    got = tt.tensor_files(d)
    assert [k for k, _ in got] == ["lm_head.weight", "model.embed",
                                   "model.layers.0.self_attn.q_proj.weight", "model.norm.weight"]
    assert dict(got)["model.norm.weight"] == os.path.join(d, "model", "norm", "weight")
    # a flat name and a nested one giving one key are refused, not silently merged
    tensorfs.create(os.path.join(d, "model.embed"), "float32", [2]).close()
    with pytest.raises(ValueError, match="model.embed"):
        tt.tensor_files(d)
    with pytest.raises(FileNotFoundError):
        tt.tensor_files(mnt.path("nothing"))


def check_loaded(dest, arrays):
    for k, a in arrays.items():
        with tensorfs.open(os.path.join(dest, k)) as t:
            assert (t.dtype, t.shape) == (a.dtype.name, a.shape), k
            assert t.read() == a.tobytes(), k
    with open(os.path.join(dest, "config.json")) as f:
        assert json.load(f)["hidden_size"] == 4      # the small file is its bytes
    with open(os.path.join(dest, "tokenizer.model"), "rb") as f:
        assert f.read() == b"\x00\x01tok"
    assert [k for k, _ in tt.tensor_files(dest)] == sorted(arrays)


@pytest.mark.parametrize("index", [True, False])
def test_model_dir_load(mnt, tmp_path, index):
    arrays = model_dir(str(tmp_path / "src"), index)
    dest = mnt.path("llama")
    assert _modeldir.ensure_loaded(str(tmp_path / "src"), dest) is True
    check_loaded(dest, arrays)
    assert _modeldir.ensure_loaded(str(tmp_path / "src"), dest) is False


def test_model_dir_duplicate_key_refused_and_nothing_left(mnt, tmp_path):
    src = str(tmp_path / "src")
    model_dir(src, index=False)
    write_safetensors(os.path.join(src, "model-00003.safetensors"),
                      {"model.pos": numpy.arange(2, dtype=numpy.int64)})
    with pytest.raises((ValueError, OSError)):
        _modeldir.load_model_dir(src, mnt.path("dup"))
    assert not os.path.exists(mnt.path("dup"))


def test_model_dir_truncated_shard_leaves_nothing(mnt, tmp_path):
    src = str(tmp_path / "src")
    model_dir(src)
    shard = os.path.join(src, "model-00002-of-00002.safetensors")
    with open(shard, "r+b") as f:
        f.truncate(os.path.getsize(shard) - 4)
    with pytest.raises((ValueError, OSError)):
        _modeldir.load_model_dir(src, mnt.path("t"))
    assert not os.path.exists(mnt.path("t"))


def blocked_on_flock(pid):
    """Whether pid waits for a flock (a "->" line of /proc/locks)."""
    with open("/proc/locks") as f:
        return any("->" in line and "FLOCK" in line and " %d " % pid in line for line in f)


def test_racing_loaders_one_loads_the_other_waits(mnt, tmp_path, monkeypatch):
    """While this process holds dest's lock (as the first loader does), a second process
    that finds dest missing waits on the lock; once the first has loaded and let go, the
    second sees dest and loads nothing."""
    monkeypatch.setenv("TENSORFS_LOCK_DIR", str(tmp_path))
    src = str(tmp_path / "src")
    arrays = model_dir(src)
    dest = mnt.path("raced")
    second = textwrap.dedent("""
        import sys
        from tensorfs import _modeldir
        print(_modeldir.ensure_loaded(sys.argv[1], sys.argv[2]))
    """)
    with _modeldir.Lock(dest):
        p = subprocess.Popen([sys.executable, "-c", second, src, dest],
                             stdout=subprocess.PIPE, text=True)
        try:
            assert wait_until(lambda: blocked_on_flock(p.pid) or p.poll() is not None, 60)
            assert p.poll() is None and blocked_on_flock(p.pid), "the second did not wait"
            _modeldir.load_model_dir(src, dest)
        except BaseException:
            p.kill()
            p.wait()
            raise
    out, _ = p.communicate(timeout=100)
    assert p.returncode == 0 and out.strip() == "False"
    check_loaded(dest, arrays)


def test_lock_is_dropped_when_its_holder_dies(tmp_path, monkeypatch):
    monkeypatch.setenv("TENSORFS_LOCK_DIR", str(tmp_path))
    dest = str(tmp_path / "dest")
    holder = textwrap.dedent("""
        import sys, os
        from tensorfs import _modeldir
        _modeldir.Lock(sys.argv[1]).__enter__()
        print("held", flush=True)
        os.kill(os.getpid(), 9)
    """)
    r = subprocess.run([sys.executable, "-c", holder, dest], capture_output=True, text=True,
                       timeout=100)
    assert r.stdout.strip() == "held" and r.returncode == -9
    with _modeldir.Lock(dest) as lk:       # would block forever if the lock outlived it
        assert lk.fd >= 0
