"""tensorfs.load/save (npy, raw, safetensors), ls, info, rm."""
import errno
import json
import os

import numpy
import pytest

import tensorfs
from conftest import ROOT

SAFETENSORS = os.path.join(ROOT, "tests", "data", "torch-mixed.safetensors")


def test_npy_load_and_save_round_trip(mnt, tmp_path):
    a = numpy.arange(30, dtype=numpy.float64).reshape(5, 6) / 7
    numpy.save(tmp_path / "a.npy", a)
    t = tensorfs.load(tmp_path / "a.npy", mnt.path("a"))
    assert (t.dtype, t.shape) == ("float64", (5, 6))
    assert numpy.array_equal(numpy.from_dlpack(t), a)
    t.close()
    tensorfs.save(mnt.path("a"), tmp_path / "b.npy")
    assert numpy.array_equal(numpy.load(tmp_path / "b.npy"), a)


def test_raw_load_with_dtype_and_shape(mnt, tmp_path):
    a = numpy.arange(8, dtype=numpy.int16)
    (tmp_path / "r.bin").write_bytes(a.tobytes())
    with tensorfs.load(tmp_path / "r.bin", mnt.path("r"), format="raw", dtype="int16",
                       shape=(2, 4)) as t:
        assert (t.dtype, t.shape) == ("int16", (2, 4))
        assert numpy.array_equal(numpy.from_dlpack(t), a.reshape(2, 4))
    tensorfs.save(mnt.path("r"), tmp_path / "out.raw", format="raw")
    assert (tmp_path / "out.raw").read_bytes() == a.tobytes()


def test_safetensors_directory_saves_back_identical(mnt, tmp_path):
    assert tensorfs.load(SAFETENSORS, mnt.path("model")) is None
    assert tensorfs.ls(mnt.path("model")) == ["half", "ids", "mask", "model.embed.weight",
                                              "model.layers.0.w"]
    meta = tensorfs.info(mnt.path("model/model.embed.weight"))
    assert (meta["dtype"], meta["shape"]) == ("bfloat16", [16, 8])
    with tensorfs.open(mnt.path("model/ids")) as t:
        assert t.dtype == "int64" and t.shape == (5,)
    tensorfs.save(mnt.path("model"), tmp_path / "copy.safetensors")
    with open(SAFETENSORS, "rb") as f:
        assert (tmp_path / "copy.safetensors").read_bytes() == f.read()


def test_load_bad_file_leaves_nothing(mnt, tmp_path):
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY\x01\x00\xff\xffnot a header")
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.load(tmp_path / "bad.npy", mnt.path("bad"))
    assert "bad.npy" in str(e.value)
    with pytest.raises(FileNotFoundError):
        tensorfs.load(tmp_path / "missing.npy", mnt.path("m"))
    with pytest.raises(ValueError):
        tensorfs.load(tmp_path / "bad.npy", mnt.path("bad"), format="csv")
    assert tensorfs.ls(mnt.dir) == []


def test_save_refuses_to_overwrite(mnt, tmp_path):
    tensorfs.create(mnt.path("s"), "u8", [3]).close()
    (tmp_path / "s.raw").write_bytes(b"keep")
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.save(mnt.path("s"), tmp_path / "s.raw")
    assert e.value.errno == errno.EEXIST, e.value
    assert (tmp_path / "s.raw").read_bytes() == b"keep"
    tensorfs.save(mnt.path("s"), tmp_path / "s.raw", overwrite=True)
    assert (tmp_path / "s.raw").read_bytes() == bytes(3)


def test_ls_info_rm(mnt):
    os.mkdir(mnt.path("dir"))
    tensorfs.create(mnt.path("dir/a"), "float32", [2, 2]).close()
    tensorfs.create(mnt.path("b"), "int8", [5]).close()
    assert tensorfs.ls(mnt.dir) == ["b", "dir/"]
    meta = tensorfs.info(mnt.path("dir/a"))
    assert (meta["dtype"], meta["shape"], meta["bytes"], meta["backend"]) == \
        ("float32", [2, 2], 16, "host")
    assert meta["refcount"] == 1
    assert meta["ino"] == os.stat(mnt.path("dir/a")).st_ino    # an int, as os.stat's
    assert meta["ctime_ns"] == os.stat(mnt.path("dir/a")).st_ctime_ns
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.info(mnt.path("dir"))
    assert e.value.errno == errno.ENODATA
    tensorfs.rm(mnt.path("b"))
    with pytest.raises(FileNotFoundError):
        tensorfs.rm(mnt.path("b"))
    tensorfs.rm(mnt.path("b"), missing_ok=True)
    with pytest.raises(tensorfs.Error):
        tensorfs.rm(mnt.path("dir"))
    tensorfs.rm(mnt.path("dir"), recursive=True)
    assert tensorfs.ls(mnt.dir) == []
    with pytest.raises(NotADirectoryError):
        tensorfs.create(mnt.path("x"), "u8", [1]).close() or tensorfs.ls(mnt.path("x"))


@pytest.mark.parametrize("raw", [b"", b"[1,2]", b"\xff\xfe", b"[" * 100000, b'"text"', b"null"],
                         ids=["empty", "list", "bad-utf8", "deep", "string", "null"])
def test_info_parse_refuses_what_is_not_an_object(raw):
    # The parser alone, on bytes: a file anywhere may carry a user.tensor.meta of its own.
    with pytest.raises(tensorfs.Error) as e:
        tensorfs.files._parse_meta(raw, "f")
    assert e.value.errno == errno.EBADMSG


def test_info_parse_ino_and_dtype_only_when_well_formed():
    parse = tensorfs.files._parse_meta
    assert parse(b'{"ino":"6554687949984450041","dtype":"bf16"}', "f") == \
        {"ino": 6554687949984450041, "dtype": "bfloat16"}
    for odd in ('"\u00b2"', '"12a"', '"-1"', '""', '"1' + '0' * 19 + '"', "[1]", "7"):
        meta = parse(('{"ino":%s,"dtype":[]}' % odd).encode(), "f")
        assert meta["ino"] == json.loads(odd) and meta["dtype"] == []


def test_info_parse_ctime_ns_only_when_well_formed():
    parse = tensorfs.files._parse_meta
    assert parse(b'{"ctime_ns":"1795430393412897033"}', "f") == {"ctime_ns": 1795430393412897033}
    for odd in ('"12a"', '"-1"', '""', '"1' + '0' * 19 + '"', "7"):
        assert parse(('{"ctime_ns":%s}' % odd).encode(), "f")["ctime_ns"] == json.loads(odd)
