#!/usr/bin/env python3
# Writes a Hugging Face model directory as transformers' save_pretrained lays one out:
# shards model-0000K-of-0000N.safetensors (each laid out as the safetensors library
# writes: by dtype order, last first, then by name; __metadata__ {"format": "pt"}), the
# index model.safetensors.index.json (json.dumps(indent=2, sort_keys=True) + newline,
# metadata.total_size) and small files (config, generation config, tokenizer files, a
# .model, a .txt, a chat template), all with seeded random bytes.
#   hf_make.py DIR SEED SHARDS [--no-index] [--dup] [--collide] [--big MB]
# SHARDS 1 with --no-index writes one model.safetensors. --dup: the first key of shard 1
# is in shard 2 too; --collide: shard 1 holds a key named config.json; --big MB: one
# tensor of MB MiB in the last shard. Standard library only: runs with any python3.
import json, os, random, struct, sys

ORDER = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16", "I32",
         "U32", "F32", "F64", "I64", "U64"]
SIZE = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2,
        "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8}

args = sys.argv[1:]
flags = {a for a in args if a.startswith("--")}
big = 0
if "--big" in args:
    big = int(args[args.index("--big") + 1])
    args = args[:args.index("--big")] + args[args.index("--big") + 2:]
out, seed, nshards = [a for a in args if not a.startswith("--")][:3]
seed, nshards = int(seed), int(nshards)
rng = random.Random(seed)
os.makedirs(out, exist_ok=True)


def write_st(path, ents):
    ents = sorted(ents, key=lambda e: (-ORDER.index(e[1]), e[0]))
    h, off = {"__metadata__": {"format": "pt"}}, 0
    for name, dt, dims, n in ents:
        h[name] = {"dtype": dt, "shape": dims, "data_offsets": [off, off + n]}
        off += n
    j = json.dumps(h, separators=(",", ":")).encode()
    j += b" " * ((8 - len(j) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(j)) + j)
        for name, dt, dims, n in ents:
            f.write(rng.randbytes(n) if dt != "BOOL" else bytes(rng.randrange(2) for _ in range(n)))


def ent(name, dt, dims):
    n = SIZE[dt]
    for d in dims:
        n *= d
    return (name, dt, dims, n)


tensors = [ent("model.embed_tokens.weight", "BF16", [64, 32]),
           ent("model.norm.weight", "F32", [32]),
           ent("lm_head.weight", "F8_E4M3", [64, 32]),
           ent("lm_head.weight_scale", "F32", [])]
for i in range(2 * nshards):
    tensors += [ent("model.layers.%d.self_attn.q_proj.weight" % i, "BF16", [32, 32]),
                ent("model.layers.%d.mlp.up_proj.weight" % i, "F16", [48, 32]),
                ent("model.layers.%d.input_layernorm.weight" % i, "F32", [32])]
if big:
    tensors.append(ent("model.big.weight", "U8", [big, 1 << 20]))
shards = [[] for _ in range(nshards)]
for i, t in enumerate(tensors):
    shards[min(i * nshards // len(tensors), nshards - 1) if t[0] != "model.big.weight" else nshards - 1].append(t)
if "--dup" in flags and nshards > 1:
    shards[1].append(shards[0][0])
if "--collide" in flags:
    shards[0].append(ent("config.json", "U8", [16]))
weight_map, total = {}, 0
for k, sh in enumerate(shards):
    name = "model.safetensors" if nshards == 1 and "--no-index" in flags else \
        "model-%05d-of-%05d.safetensors" % (k + 1, nshards)
    write_st(os.path.join(out, name), sh)
    for t in sh:
        weight_map.setdefault(t[0], name)
        total += t[3]
if "--no-index" not in flags:
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map},
                           indent=2, sort_keys=True) + "\n")
small = {
    "config.json": json.dumps({"architectures": ["LlamaForCausalLM"], "hidden_size": 32,
                               "model_type": "llama", "torch_dtype": "bfloat16"}, indent=2) + "\n",
    "generation_config.json": json.dumps({"bos_token_id": 1, "eos_token_id": 2}, indent=2) + "\n",
    "tokenizer.json": json.dumps({"version": "1.0", "model": {"vocab": {"<s>": 1, "a": 5}}}) + "\n",
    "tokenizer_config.json": "{}\n",
    "special_tokens_map.json": "",
    "merges.txt": "#version: 0.2\na b\n",
    "chat_template.jinja": "{% for m in messages %}{{ m.content }}{% endfor %}\n",
}
for name, text in small.items():
    with open(os.path.join(out, name), "w") as f:
        f.write(text)
with open(os.path.join(out, "tokenizer.model"), "wb") as f:
    f.write(rng.randbytes(3000))
# Not part of a model: ignored by a load.
with open(os.path.join(out, ".gitattributes"), "w") as f:
    f.write("*.safetensors filter=lfs\n")
os.makedirs(os.path.join(out, "original"), exist_ok=True)
with open(os.path.join(out, "README.md"), "w") as f:
    f.write("# a model\n")
