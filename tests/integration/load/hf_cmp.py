#!/usr/bin/env python3
# Compares a Hugging Face model directory with what a load made of it, or two model
# directories. Prints one line per difference and exits 1 when there is any.
#   hf_cmp.py tensors SRC DEST   every key of SRC's shards: DEST/key holds its bytes, with
#                                its dtype and shape; every small file: DEST/name its bytes
#   hf_cmp.py dirs A B           the same keys in the same shards with the same dtype,
#                                shape and bytes; indexes equal as JSON except total_size,
#                                which B must have right; small files equal
# Standard library only.
import json, os, struct, sys

DT = {"BOOL": "bool", "U8": "u8", "I8": "i8", "F8_E5M2": "f8e5m2", "F8_E4M3": "f8e4m3",
      "I16": "i16", "U16": "u16", "F16": "f16", "BF16": "bf16", "I32": "i32", "U32": "u32",
      "F32": "f32", "F64": "f64", "I64": "i64", "U64": "u64"}
SMALL = (".json", ".model", ".txt", ".jinja")
bad = []


def shards(d):
    idx = os.path.join(d, "model.safetensors.index.json")
    if os.path.exists(idx):
        return sorted(set(json.load(open(idx))["weight_map"].values()))
    return sorted(f for f in os.listdir(d) if f.endswith(".safetensors"))


def keys(d):
    out = {}
    for s in shards(d):
        with open(os.path.join(d, s), "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            h = json.loads(f.read(n))
            base = 8 + n
            for k, v in h.items():
                if k == "__metadata__":
                    continue
                a, b = v["data_offsets"]
                f.seek(base + a)
                out[k] = (s, v["dtype"], v["shape"], f.read(b - a))
    return out


def smalls(d):
    return sorted(f for f in os.listdir(d) if f.endswith(SMALL) and not f.startswith(".")
                  and os.path.isfile(os.path.join(d, f)))


def main():
    mode, a, b = sys.argv[1:4]
    ka = keys(a)
    if mode == "tensors":
        for k, (s, dt, shape, data) in ka.items():
            p = os.path.join(b, k)
            got = open(p, "rb").read() if os.path.exists(p) else None
            if got != data:
                bad.append("%s: bytes differ from %s" % (k, s))
                continue
            if os.getxattr(p, "user.tensor.dtype").decode() != DT[dt]:
                bad.append("%s: dtype %s" % (k, os.getxattr(p, "user.tensor.dtype")))
            if json.loads(os.getxattr(p, "user.tensor.shape")) != shape:
                bad.append("%s: shape %s, expected %s" % (k, os.getxattr(p, "user.tensor.shape"), shape))
        for f in smalls(a):
            p = os.path.join(b, f)
            if not os.path.exists(p) or open(p, "rb").read() != open(os.path.join(a, f), "rb").read():
                bad.append("%s: small file differs" % f)
            elif os.getxattr(p, "user.tensor.dtype") != b"u8":
                bad.append("%s: not u8" % f)
        want = set(ka) | set(smalls(a))
        got = set()
        for root, dirs, files in os.walk(b):
            for f in files:
                got.add(os.path.relpath(os.path.join(root, f), b))
        if got != want:
            bad.append("names: extra %s, missing %s" % (sorted(got - want), sorted(want - got)))
    else:
        kb = keys(b)
        if ka != kb:
            for k in sorted(set(ka) | set(kb)):
                if ka.get(k) != kb.get(k):
                    bad.append("%s: %s against %s" % (k, ka.get(k, ("missing",))[:3], kb.get(k, ("missing",))[:3]))
        ia, ib = (os.path.join(d, "model.safetensors.index.json") for d in (a, b))
        if os.path.exists(ia) != os.path.exists(ib):
            bad.append("index: only in one")
        elif os.path.exists(ia):
            ja, jb = json.load(open(ia)), json.load(open(ib))
            total = sum(len(v[3]) for v in kb.values())
            if jb["metadata"].get("total_size") != total:
                bad.append("index: total_size %s, the tensors have %d" % (jb["metadata"].get("total_size"), total))
            if ja != jb:
                bad.append("index differs: %s against %s" % (ja, jb))
        for f in sorted(set(smalls(a)) | set(smalls(b))):
            if f == "model.safetensors.index.json":
                continue
            pa, pb = os.path.join(a, f), os.path.join(b, f)
            if not (os.path.exists(pa) and os.path.exists(pb)) or \
               open(pa, "rb").read() != open(pb, "rb").read():
                bad.append("%s: small file differs" % f)
        for s in shards(b):
            with open(os.path.join(b, s), "rb") as f:
                n = struct.unpack("<Q", f.read(8))[0]
                if json.loads(f.read(n)).get("__metadata__", {}).get("format") != "pt":
                    bad.append("%s: __metadata__ lacks format pt" % s)
    for line in bad:
        print(line)
    sys.exit(1 if bad else 0)


main()
