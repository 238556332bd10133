"""tensorfs.torch on the host backend, where torch is installed (CPU tensors viewing the
shared mapping); skipped without torch. The GPU suite has the CUDA side
(gpu/test_torch.py)."""
import os

import pytest

import tensorfs
import tensorfs.torch as tt

torch = pytest.importorskip("torch")


def test_publish_and_view_round_trip_on_the_host(mnt):
    sd = {"model.w": torch.arange(12, dtype=torch.float32).reshape(3, 4),
          "model.b": torch.arange(5, dtype=torch.int64),
          "model/nested": torch.ones(2, 2, dtype=torch.float16),
          "half": torch.arange(6, dtype=torch.float32).to(torch.bfloat16)}
    d = mnt.path("sd")
    tt.publish_state_dict(sd, d, threads=3)
    tensorfs.create(os.path.join(d, "config.json"), "u8", [2]).close()   # a small file
    back = tt.state_dict(d, mode="r+")
    assert sorted(back) == sorted(k.replace("/", ".") for k in sd)
    for k, v in sd.items():
        x = back[k.replace("/", ".")]
        assert x.dtype == v.dtype and torch.equal(x, v), k
    with tensorfs.open(os.path.join(d, "model.w")) as t:
        assert back["model.w"].data_ptr() == t.data_ptr, "a view, not a copy"
    back["model.w"].fill_(2.0)                   # through the view, into the tensor
    with open(os.path.join(d, "model.w"), "rb") as f:
        assert f.read() == torch.full((12,), 2.0).numpy().tobytes()


def test_view_outlives_the_name(mnt):
    d = mnt.path("gone")
    tt.publish_state_dict({"w": torch.arange(1000, dtype=torch.float32)}, d)
    x = tt.state_dict(d)["w"]
    tensorfs.rm(d, recursive=True)
    assert torch.equal(x, torch.arange(1000, dtype=torch.float32))


def test_load_into_strict_and_tied(mnt):
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(10, 4)
            self.head = torch.nn.Linear(4, 10, bias=False)
            self.head.weight = self.emb.weight
            self.register_buffer("scale", torch.ones(1))

    torch.manual_seed(0)
    src = Tied()
    d = mnt.path("tied")
    tt.publish_state_dict({"emb.weight": src.emb.weight.detach(),
                           "scale": torch.full((1,), 3.0)}, d)
    dst = Tied()
    ptr = dst.emb.weight.data_ptr()
    r = tt.load_into(dst, d)                      # head.weight: the same tensor as emb.weight
    assert r.missing_keys == [] and r.unexpected_keys == []
    assert dst.emb.weight.data_ptr() == ptr and torch.equal(dst.head.weight, src.emb.weight)
    assert float(dst.scale) == 3.0
    tensorfs.rm(os.path.join(d, "scale"))
    with pytest.raises(RuntimeError, match="scale"):
        tt.load_into(dst, d)
    assert tt.load_into(dst, d, strict=False).missing_keys == ["scale"]


def test_publish_refuses_small_file_names_and_cleans_up(mnt):
    with pytest.raises(ValueError):
        tt.publish_state_dict({"config.json": torch.zeros(1)}, mnt.path("x"))
    d = mnt.path("y")
    tt.publish_state_dict({"b": torch.zeros(2)}, d)
    with pytest.raises(FileExistsError):
        tt.publish_state_dict({"a": torch.zeros(2), "b": torch.ones(2)}, d, threads=1)
    assert tensorfs.ls(d) == ["b"]


def test_zero_d_and_empty_tensors_leave_the_mount_unbusy(mnt):
    """A 0-byte tensor is not viewed through DLPack (torch drops such a capsule without
    calling its deleter, torch 1.13 at least: the tensor would stay open and the mount
    busy at teardown)."""
    d = mnt.path("z")
    tt.publish_state_dict({"e": torch.zeros(0, 3), "s": torch.tensor(7)}, d)
    sd = tt.state_dict(d)
    assert sd["e"].shape == (0, 3) and sd["e"].dtype == torch.float32
    assert sd["s"].shape == () and int(sd["s"]) == 7
