#!/usr/bin/env python3
# Writes a .safetensors file laid out as the safetensors library writes one (tensors by
# the library's dtype order, last first, then by name; compact JSON header padded with
# spaces), with seeded random bytes, so a load and a save give back the same file.
#   st_make.py OUT SEED NAME:DTYPE:D0,D1,... [...]     (a shape of "-" is a scalar)
# Standard library only: runs with any python3.
import json, random, struct, sys

ORDER = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16", "I32",
         "U32", "F32", "F64", "I64", "U64"]
SIZE = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2,
        "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8}

out, seed, specs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rng = random.Random(seed)
ents = []
for s in specs:
    name, dt, shape = s.split(":")
    dims = [] if shape == "-" else [int(x) for x in shape.split(",")]
    n = SIZE[dt]
    for d in dims:
        n *= d
    ents.append((name, dt, dims, n))
ents.sort(key=lambda e: (-ORDER.index(e[1]), e[0]))
h, off = {"__metadata__": {"format": "pt"}}, 0
for name, dt, dims, n in ents:
    h[name] = {"dtype": dt, "shape": dims, "data_offsets": [off, off + n]}
    off += n
j = json.dumps(h, separators=(",", ":")).encode()
j += b" " * ((8 - len(j) % 8) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(j)) + j)
    for name, dt, dims, n in ents:
        if dt == "BOOL":
            f.write(bytes(rng.randrange(2) for _ in range(n)))
        else:
            f.write(rng.randbytes(n))
