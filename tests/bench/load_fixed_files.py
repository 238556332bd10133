# The inputs of tests/bench/load_fixed.sh, with the Python standard library only:
#   tiny.safetensors   3 F32 tensors of 64 B, 1 KiB and 4 KiB
#   many.safetensors   512 F32 tensors of 16 KiB
#   mid.safetensors    ~200 MB in the shapes of a small LLM's layers (bf16): per layer
#                      4 attention projections, 3 MLP projections and 2 norms
#   model/             a Hugging Face model directory: 3 shards of ~33 MB, the safetensors
#                      index, config.json
# Data from os.urandom; sizes scale with FIXED_MB (default 200). Usage: DIR
import json, os, struct, sys

def write(path, tensors):
    """tensors: [(name, dtype, shape)]; bf16/f32 only"""
    size = {"BF16": 2, "F32": 4}
    hdr, off = {"__metadata__": {"format": "pt"}}, 0
    for name, dt, shape in tensors:
        n = size[dt]
        for d in shape:
            n *= d
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + n]}
        off += n
    j = json.dumps(hdr, separators=(",", ":")).encode()
    j += b" " * ((8 - len(j) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(j)) + j)
        left = off
        while left:
            k = min(left, 8 << 20)
            f.write(os.urandom(k))
            left -= k
    return [name for name, _, _ in tensors]

def layers(first, count, hidden, inter):
    out = []
    for i in range(first, first + count):
        p = "model.layers.%d." % i
        for w in ("q_proj", "k_proj", "v_proj", "o_proj"):
            out.append((p + "self_attn." + w + ".weight", "BF16", [hidden, hidden]))
        for w, s in (("gate_proj", [inter, hidden]), ("up_proj", [inter, hidden]),
                     ("down_proj", [hidden, inter])):
            out.append((p + "mlp." + w + ".weight", "BF16", s))
        out.append((p + "input_layernorm.weight", "BF16", [hidden]))
        out.append((p + "post_attention_layernorm.weight", "BF16", [hidden]))
    return out

d = sys.argv[1]
mb = int(os.environ.get("FIXED_MB", "200"))
write(d + "/tiny.safetensors", [("a", "F32", [16]), ("b", "F32", [256]), ("c", "F32", [1024])])
# per-tensor costs: 512 F32 tensors of 16 KiB (biases, norms, a KV cache's blocks)
write(d + "/many.safetensors", [("t%03d" % i, "F32", [4096]) for i in range(512)])
# one layer of hidden 1024, inter 2816: 2 * (4 * 1M + 3 * 2.75M + 2K) ~ 24.8 MB
nl = max(1, round(mb / 24.8))
write(d + "/mid.safetensors", [("model.embed_tokens.weight", "BF16", [4096, 1024])] +
      layers(0, nl - 1, 1024, 2816) + [("model.norm.weight", "BF16", [1024])])
os.makedirs(d + "/model", exist_ok=True)
wm, total = {}, 0
for s in range(3):
    name = "model-%05d-of-00003.safetensors" % (s + 1)
    for t in write(d + "/model/" + name, layers(s * 2, 2, 768, 2048)):
        wm[t] = name
    total += os.path.getsize(d + "/model/" + name)
json.dump({"metadata": {"total_size": total}, "weight_map": wm},
          open(d + "/model/model.safetensors.index.json", "w"))
json.dump({"model_type": "llama", "hidden_size": 768, "num_hidden_layers": 6},
          open(d + "/model/config.json", "w"))
