#!/usr/bin/env python3
"""The pieces of tests/bench/model_bench.sh (a Hugging Face model directory into tensorfs,
and processes attaching to it), each printing "ROW SECONDS [GB/s]" lines:

  model_bench.py make DIR GB        a Llama of about GB GB in bf16 (random weights, made on
                                    the GPU), written with save_pretrained in 5 GB shards
  model_bench.py hf DIR             from_pretrained(DIR, device_map="cuda") in this process
  model_bench.py loadfile DIR       safetensors load_file(device="cuda") of each shard
  model_bench.py attach DEST T0     a fresh process: import, tensorfs.transformers
                                    .from_pretrained(DEST), first forward pass; T0 is the
                                    shell's clock before the interpreter started
  model_bench.py hfattach DIR T0    the same with transformers' from_pretrained(DIR)
  model_bench.py ceiling           a pinned host-to-device copy of 4 GiB, whole, best of 3
  model_bench.py profile DEST      attach as a fresh process does, under cProfile: the 30
                                    costliest calls (cumulative)
  model_bench.py step DEST          in a warm process: the attach step alone
                                    (tensorfs.torch.state_dict, then the whole
                                    from_pretrained) three times, and its cost per tensor

The attach rows end with a line "logits SUM" of the first forward pass, so that the shell
compares tensorfs's model with transformers' on the same input.
"""
import os
import sys
import time

T_START = time.time()


def row(name, seconds, nbytes=None):
    if nbytes:
        print("%s %.4f %.2f" % (name, seconds, nbytes / seconds / 1e9), flush=True)
    else:
        print("%s %.4f" % (name, seconds), flush=True)


def dir_bytes(d):
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)
               if f.endswith(".safetensors"))


def make(d, gb):
    import torch
    import transformers
    # Llama-3-8B's shapes, layers scaled to the size asked for (32 layers: 16.06 GB).
    per_layer = 2 * (4096 * 4096 * 2 + 4096 * 1024 * 2 + 3 * 4096 * 14336)
    embed = 2 * 2 * 128256 * 4096
    layers = max(1, round((gb * 1e9 - embed) / per_layer))
    cfg = transformers.LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336,
                                   num_hidden_layers=layers, num_attention_heads=32,
                                   num_key_value_heads=8, max_position_embeddings=8192,
                                   rope_theta=500000.0, tie_word_embeddings=False,
                                   torch_dtype="bfloat16")
    cfg.architectures = ["LlamaForCausalLM"]
    torch.manual_seed(0)
    with torch.device("cuda"):
        m = transformers.LlamaForCausalLM._from_config(cfg, torch_dtype=torch.bfloat16)
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0, 0.02)
    t0 = time.perf_counter()
    m.save_pretrained(d, max_shard_size="5GB")
    row("save_pretrained", time.perf_counter() - t0, dir_bytes(d))
    print("# %d layers, %d tensors, %.2f GB in %d shards" % (
        layers, len(m.state_dict()), dir_bytes(d) / 1e9,
        len([f for f in os.listdir(d) if f.endswith(".safetensors")])), flush=True)


def _forward(torch, m):
    ids = torch.arange(1, 17, device=m.device).unsqueeze(0)
    with torch.no_grad():
        out = m(input_ids=ids).logits
    torch.cuda.synchronize()
    return float(out.float().sum())


def hf(d):
    import torch
    import transformers
    torch.cuda.init()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    m = transformers.AutoModelForCausalLM.from_pretrained(d, device_map="cuda",
                                                          dtype=torch.bfloat16)
    torch.cuda.synchronize()
    row("from_pretrained-device_map-cuda", time.perf_counter() - t0, dir_bytes(d))


def loadfile(d):
    import torch
    from safetensors.torch import load_file
    torch.cuda.init()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    n = 0
    for f in sorted(os.listdir(d)):
        if f.endswith(".safetensors"):
            sd = load_file(os.path.join(d, f), device="cuda")
            n += len(sd)
            del sd
    torch.cuda.synchronize()
    row("load_file-each-shard", time.perf_counter() - t0, dir_bytes(d))


def attach(path, t0, ours):
    t_py = time.time()
    import torch
    if ours:
        from tensorfs.transformers import from_pretrained
    else:
        import transformers
    torch.cuda.init()
    t_imp = time.time()
    if ours:
        m = from_pretrained(path)
    else:
        m = transformers.AutoModelForCausalLM.from_pretrained(path, device_map="cuda",
                                                              dtype=torch.bfloat16)
    torch.cuda.synchronize()
    t_att = time.time()
    s = _forward(torch, m)
    t_fwd = time.time()
    tag = "tensorfs" if ours else "transformers"
    row("%s-interpreter-start" % tag, t_py - t0)
    row("%s-import-torch-cuda-init" % tag, t_imp - t_py)
    row("%s-attach-or-load" % tag, t_att - t_imp)
    row("%s-first-forward" % tag, t_fwd - t_att)
    row("%s-start-to-first-forward" % tag, t_fwd - t0)
    print("logits %r" % s, flush=True)


def profile(path):
    import cProfile
    import pstats
    pr = cProfile.Profile()
    pr.enable()
    import torch
    from tensorfs.transformers import from_pretrained
    m = from_pretrained(path)
    torch.cuda.synchronize()
    pr.disable()
    del m
    pstats.Stats(pr).sort_stats("cumulative").print_stats(30)


def ceiling():
    import torch
    n = 4 << 30
    src = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    dst = torch.empty(n, dtype=torch.uint8, device="cuda")
    best = None
    for _ in range(3):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        dst.copy_(src, non_blocking=True)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    row("pinned-h2d-ceiling-4GiB", best, n)


def step(path):
    import torch
    import tensorfs.torch as tt
    from tensorfs.transformers import from_pretrained
    torch.cuda.init()
    from_pretrained(path)              # transformers' own first-use costs, once
    torch.cuda.synchronize()
    for i in range(3):
        t0 = time.perf_counter()
        sd = tt.state_dict(path)
        t1 = time.perf_counter()
        n = len(sd)
        nbytes = sum(v.numel() * v.element_size() for v in sd.values())
        del sd
        t2 = time.perf_counter()
        m = from_pretrained(path)
        torch.cuda.synchronize()
        t3 = time.perf_counter()
        del m
        row("state_dict-open-every-weight", t1 - t0)
        for th in (1, 16):
            ta = time.perf_counter()
            sd = tt.state_dict(path, threads=th)
            row("state_dict-open-every-weight-threads-%d" % th, time.perf_counter() - ta)
            del sd
        row("from_pretrained-attach-whole", t3 - t2)
    print("# %d tensors, %.2f GB: %.1f us per tensor for state_dict, %.1f us per tensor "
          "for the whole attach" % (n, nbytes / 1e9, (t1 - t0) / n * 1e6,
                                    (t3 - t2) / n * 1e6), flush=True)


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "make":
        make(sys.argv[2], float(sys.argv[3]))
    elif cmd == "hf":
        hf(sys.argv[2])
    elif cmd == "loadfile":
        loadfile(sys.argv[2])
    elif cmd in ("attach", "hfattach"):
        attach(sys.argv[2], float(sys.argv[3]), cmd == "attach")
    elif cmd == "profile":
        profile(sys.argv[2])
    elif cmd == "ceiling":
        ceiling()
    elif cmd == "step":
        step(sys.argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
