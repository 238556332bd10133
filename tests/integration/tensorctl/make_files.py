# The tensorctl tests' input files, made with the Python standard library only (numpy may
# be missing): good and broken .npy and .safetensors files. Usage: make_files.py DIR
import json, struct, sys, random
random.seed(7)
def npy(path, descr, shape, data):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(str(x) for x in shape) + ("," if len(shape) == 1 else ""))
    total = (10 + len(d) + 1 + 63) // 64 * 64
    h = d + " " * (total - 10 - len(d) - 1) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + data)
SIZES = {"F64": 8, "I64": 8, "F32": 4, "I32": 4, "BF16": 2, "F16": 2, "U8": 1, "BOOL": 1}
def safetensors(path, tensors, metadata=None, hdr_override=None, extra=b""):
    # layout of the safetensors library: larger itemsize first, then by name
    order = sorted(tensors, key=lambda n: (-SIZES[tensors[n][0]], n))
    hdr, off, blob = {}, 0, b""
    if metadata is not None:
        hdr["__metadata__"] = metadata
    for n in order:
        dt, shape, data = tensors[n]
        hdr[n] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(data)]}
        off += len(data); blob += data
    if hdr_override: hdr_override(hdr)
    j = json.dumps(hdr, separators=(",", ":")).encode()
    j += b" " * ((8 - len(j) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(j)) + j + blob + extra)
def rnd(n): return bytes(random.getrandbits(8) for _ in range(n))
T = sys.argv[1]
npy(T + "/a.npy", "<f4", (3, 4, 5), rnd(240))
npy(T + "/b.npy", "|u1", (1000,), rnd(1000))
npy(T + "/s.npy", "<f8", (), rnd(8))
npy(T + "/big.npy", "<i8", (512, 1024), rnd(4 << 20))
npy(T + "/trunc.npy", "<f4", (3, 4, 5), rnd(200))
npy(T + "/over.npy", "<f4", (3, 4, 5), rnd(260))
open(T + "/hdrcut.npy", "wb").write(open(T + "/a.npy", "rb").read()[:40])
npy(T + "/fortran.npy", "<f4", (2,), rnd(8)); d = open(T + "/fortran.npy", "rb").read().replace(b"False", b"True ")
open(T + "/fortran.npy", "wb").write(d)
ts = {"embed.weight": ("F32", [4, 8], rnd(128)), "layers/0/bias": ("BF16", [8], rnd(16)),
      "layers/0/w": ("F16", [2, 3], rnd(12)), "ids": ("I64", [5], rnd(40)),
      "mask": ("BOOL", [3], bytes([1, 0, 1])), "scale": ("F64", [], rnd(8)), "empty": ("U8", [0], b"")}
safetensors(T + "/m.safetensors", ts, {"format": "pt", "note": "made by t_tensorctl"})
safetensors(T + "/nometa.safetensors", {"x": ("U8", [3], b"abc")})
def past_end(h): h["mask"]["data_offsets"] = [x + 64 for x in h["mask"]["data_offsets"]]
safetensors(T + "/past_end.safetensors", ts, None, past_end)
def overlap(h): h["mask"]["data_offsets"] = [0, 3]
safetensors(T + "/overlap.safetensors", ts, None, overlap)
def baddt(h): h["ids"]["dtype"] = "C64"
safetensors(T + "/baddtype.safetensors", ts, None, baddt)
safetensors(T + "/trailing.safetensors", ts, None, None, b"xyz")
d = open(T + "/m.safetensors", "rb").read()
open(T + "/hdrlen.safetensors", "wb").write(struct.pack("<Q", len(d) + 100) + d[8:])
open(T + "/short.safetensors", "wb").write(d[:5])
safetensors(T + "/badname.safetensors", {"../escape": ("U8", [1], b"x")})
safetensors(T + "/toobig.safetensors", {"a": ("U8", [1 << 20], bytes(1 << 20)), "b": ("U8", [1 << 20], bytes(1 << 20))})
