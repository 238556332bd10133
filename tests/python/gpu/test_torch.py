"""tensorfs.torch and tensorfs.transformers on the cuda backend (tests/gpu/t_python.sh runs
these with TFS_BACKEND=cuda): state dicts as zero-copy views, publish_state_dict,
load_into, and a transformers Llama attached from other processes with the outputs of
from_pretrained of its source directory."""
import gc
import json
import os
import subprocess
import sys
import textwrap

import pytest

import tensorfs
import tensorfs.torch as tt
from conftest import ROOT

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("torch sees no CUDA device", allow_module_level=True)

FP8 = [n for n in ("float8_e4m3fn", "float8_e5m2") if hasattr(torch, n)]


def same_bytes(a, b):
    """Equal dtype, shape and bits (fp8 has no torch.equal)."""
    assert a.dtype == b.dtype and a.shape == b.shape
    return a.detach().reshape(-1).view(torch.uint8).cpu().numpy().tobytes() == \
        b.detach().reshape(-1).view(torch.uint8).cpu().numpy().tobytes()


def sample_state_dict():
    g = torch.Generator(device="cpu").manual_seed(1)
    sd = {
        "model.layers.0.mlp.weight": torch.randn(16, 8, generator=g).cuda(),
        "model.norm.weight": torch.randn(8, generator=g).to(torch.bfloat16).cuda(),
        "lm_head.weight": torch.randn(4, 8, generator=g),          # a CPU tensor
        "model.step": torch.tensor(7, dtype=torch.int64).cuda(),   # 0-d
        "nested/bias": torch.randn(3, generator=g).cuda(),
        "model.empty": torch.zeros(0, 4).cuda(),                    # 0 bytes
    }
    for n in FP8:
        sd["model.%s" % n] = torch.linspace(-4, 4, 32).cuda().to(getattr(torch, n))
    return sd


def test_state_dict_round_trip_keeps_dtypes_without_copy(mnt):
    sd = sample_state_dict()
    d = mnt.path("sd")
    tt.publish_state_dict(sd, d)
    back = tt.state_dict(d)
    want = {k.replace("/", "."): v for k, v in sd.items()}
    assert sorted(back) == sorted(want)
    for k, v in want.items():
        x = back[k]
        assert x.is_cuda and x.dtype == v.dtype and tuple(x.shape) == tuple(v.shape), k
        assert same_bytes(x, v.cuda()), k
    for n in FP8:
        assert tensorfs.info(os.path.join(d, "model." + n))["dtype"] == n
    # a view, not a copy, of each dtype's path (DLPack, and uint8 + .view for fp8)
    for k in ["model.layers.0.mlp.weight", "model.norm.weight"] + ["model." + n for n in FP8]:
        with tensorfs.open(os.path.join(d, k)) as t:
            assert back[k].data_ptr() == t.data_ptr, k


def test_views_keep_their_tensors_alive(mnt):
    d = mnt.path("alive")
    sd = sample_state_dict()
    tt.publish_state_dict(sd, d)
    views = tt.state_dict(d)
    tensorfs.rm(d, recursive=True)               # the names go; the views hold the memory
    torch.cuda.synchronize()
    for k, v in sd.items():
        assert same_bytes(views[k.replace("/", ".")], v.cuda()), k


def test_state_dict_to_another_device_copies(mnt):
    d = mnt.path("cpu")
    tt.publish_state_dict({"w": torch.arange(6, dtype=torch.float32).cuda()}, d)
    x = tt.state_dict(d, device="cpu")["w"]
    assert x.device.type == "cpu" and torch.equal(x, torch.arange(6, dtype=torch.float32))


def test_publish_existing_key_fails_and_removes_what_it_made(mnt):
    d = mnt.path("dup")
    tt.publish_state_dict({"b": torch.zeros(2).cuda()}, d)
    with pytest.raises(FileExistsError):
        tt.publish_state_dict({"a": torch.zeros(2).cuda(), "b": torch.ones(2).cuda()}, d,
                              threads=1)
    assert tensorfs.ls(d) == ["b"]


def test_load_into_copies_into_the_modules_memory(mnt):
    torch.manual_seed(0)
    src = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.LayerNorm(4)).cuda()
    d = mnt.path("mod")
    tt.publish_state_dict(src.state_dict(), d)
    dst = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.LayerNorm(4)).cuda()
    ptr = dst[0].weight.data_ptr()
    r = tt.load_into(dst, d)
    assert r.missing_keys == [] and r.unexpected_keys == []
    assert dst[0].weight.data_ptr() == ptr, "copied into the module's own memory"
    for k, v in src.state_dict().items():
        assert torch.equal(dst.state_dict()[k], v), k
    x = torch.randn(3, 8, device="cuda")
    assert torch.equal(dst(x), src(x))
    # strict: a key the module lacks is refused before anything is copied
    tensorfs.create(os.path.join(d, "extra"), "float32", [1]).close()
    before = dst[0].bias.detach().clone()
    with torch.no_grad():
        dst[0].bias.zero_()
    with pytest.raises(RuntimeError, match="extra"):
        tt.load_into(dst, d)
    assert torch.equal(dst[0].bias, torch.zeros_like(before))
    r = tt.load_into(dst, d, strict=False)
    assert r.unexpected_keys == ["extra"] and torch.equal(dst[0].bias, before)


# The transformers part: a tiny Llama written with save_pretrained, sharded with an index.

ATTACH = textwrap.dedent("""
    import json, sys, torch, tensorfs
    from tensorfs.transformers import from_pretrained
    dest, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
    m = from_pretrained(dest, source=src)
    w = m.model.embed_tokens.weight
    with tensorfs.open(dest + "/model.embed_tokens.weight") as t:
        zero_copy = w.data_ptr() == t.data_ptr
    ids = torch.tensor([[1, 5, 9, 17, 33, 65]], device="cuda")
    with torch.no_grad():
        logits = m(ids).logits.float().cpu()
        gen = m.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=8,
                         do_sample=False, pad_token_id=0)
    torch.save({"logits": logits, "tokens": gen.cpu(), "zero_copy": zero_copy,
                "device": str(w.device), "training": m.training}, out)
""")


def tiny_llama(tmp_path):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, max_position_embeddings=256,
                                   tie_word_embeddings=False)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg)
    src = str(tmp_path / "tiny-llama")
    model.save_pretrained(src, max_shard_size="200KB")
    return transformers, src


def reference(transformers, src):
    m = transformers.AutoModelForCausalLM.from_pretrained(src).to("cuda").eval()
    ids = torch.tensor([[1, 5, 9, 17, 33, 65]], device="cuda")
    with torch.no_grad():
        logits = m(ids).logits.float().cpu()
        gen = m.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=8,
                         do_sample=False, pad_token_id=0)
    return logits, gen.cpu()


def test_transformers_attach_from_two_racing_processes(mnt, tmp_path):
    transformers, src = tiny_llama(tmp_path)
    assert any(n.endswith(".safetensors") for n in os.listdir(src))
    dest = mnt.path("llama")
    env = dict(os.environ, TENSORFS_LOCK_DIR=str(tmp_path))
    outs = [str(tmp_path / ("out%d.pt" % i)) for i in range(2)]
    procs = [subprocess.Popen([sys.executable, "-c", ATTACH, dest, src, o], env=env)
             for o in outs]
    for p in procs:
        assert p.wait(timeout=100) == 0
    with open(os.path.join(dest, "config.json")) as f:
        assert json.load(f)["hidden_size"] == 64        # the small files came along
    logits, tokens = reference(transformers, src)
    for o in outs:
        r = torch.load(o)
        assert r["zero_copy"] and r["device"] == "cuda:0" and r["training"] is False
        torch.testing.assert_close(r["logits"], logits, rtol=1e-4, atol=1e-4)
        assert torch.equal(r["tokens"], tokens), (r["tokens"], tokens)


def test_transformers_attach_in_process_ties_and_buffers(mnt, tmp_path):
    transformers = pytest.importorskip("transformers")
    from tensorfs.transformers import from_pretrained
    cfg = transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, tie_word_embeddings=True)
    torch.manual_seed(0)
    src = str(tmp_path / "tied")
    transformers.LlamaForCausalLM(cfg).save_pretrained(src)
    m = from_pretrained(mnt.path("tied"), source=src)
    assert m.lm_head.weight.data_ptr() == m.model.embed_tokens.weight.data_ptr()
    for n, b in m.named_buffers():
        assert b.is_cuda, n
    for n, q in m.named_parameters():
        assert q.is_cuda, n
    logits, tokens = reference(transformers, src)
    ids = torch.tensor([[1, 5, 9, 17, 33, 65]], device="cuda")
    with torch.no_grad():
        torch.testing.assert_close(m(ids).logits.float().cpu(), logits, rtol=1e-4, atol=1e-4)
    del m                                        # its views hold the mount's tensors open
    gc.collect()


def test_example_transformers_attach(mnt, tmp_path):
    pytest.importorskip("transformers")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "transformers_attach.py"),
                        mnt.path("example")], capture_output=True, text=True, timeout=110,
                       env=dict(os.environ, TENSORFS_LOCK_DIR=str(tmp_path)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "same tokens: True" in r.stdout, r.stdout


def test_host_tier_pinned_by_this_process_is_cuda_host(mnt):
    """A host-tier tensor is kDLCPU until this process registers its mapping with CUDA,
    then kDLCUDAHost (frameworks copy it at pinned speed); tensorfs.torch still views it
    as a CPU tensor, which torch sees pinned."""
    src = torch.arange(1 << 20, dtype=torch.float32)
    tensorfs.publish(mnt.path("h"), src, device="cpu").close()
    with tensorfs.open(mnt.path("h"), "r+") as t:
        assert t.__dlpack_device__() == (1, 0)
        ptr = _lib_data(t)
        cudart = torch.cuda.cudart()
        assert cudart.cudaHostRegister(ptr, t.nbytes, 0) == 0
        try:
            assert t.__dlpack_device__() == (3, 0)
            v = tt.view(t)
            assert v.device.type == "cpu" and v.is_pinned()
            assert torch.equal(v.cuda(non_blocking=True).cpu(), src)
        finally:
            del v
            cudart.cudaHostUnregister(ptr)
        assert t.__dlpack_device__() == (1, 0)


def _lib_data(t):
    from tensorfs import _lib
    return _lib.tfs_tensor_data(t._handle())
