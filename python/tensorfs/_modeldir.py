"""A Hugging Face model directory into tensorfs, once, whoever comes first.

load_model_dir(src, dest): every shard of src (named by model.safetensors.index.json, or
every *.safetensors) into the one directory dest, a tensor per key, and the small files
(config.json, tokenizer files, the index) beside them as u8 tensors holding their bytes.
It is the library's directory load (tfs_load, what `tensorctl load DIR DEST` runs) where
the library takes a directory; else a Python copy of the same layout.

ensure_loaded(src, dest): load_model_dir under an exclusive flock(2) on a lock file named
for dest, so that of processes racing to be first one loads and the others wait for it,
then see dest complete. flock is dropped by the kernel when its holder dies: a loader
killed half-way (tfs_load then leaves nothing) does not block the next one.
"""
import errno
import fcntl
import hashlib
import json
import mmap
import os
import struct
import tempfile
from typing import Dict, List, Tuple

from . import files as _files
from . import tensor as _tensor
from .errors import Error

# safetensors' dtype names -> tensorfs'
_ST_DTYPES = {"BOOL": "bool", "U8": "u8", "I8": "i8", "U16": "u16", "I16": "i16",
              "U32": "u32", "I32": "i32", "U64": "u64", "I64": "i64", "F16": "f16",
              "BF16": "bf16", "F32": "f32", "F64": "f64", "F8_E4M3": "f8e4m3",
              "F8_E5M2": "f8e5m2"}
_SMALL = (".json", ".txt", ".model", ".jinja", ".md")
_MAX_HEADER = 100 << 20


def lock_path(dest: str) -> str:
    """The lock file of dest: in $TENSORFS_LOCK_DIR, else the temporary directory, named
    by a hash of dest's absolute path (every process that loads dest computes the same)."""
    d = os.environ.get("TENSORFS_LOCK_DIR") or tempfile.gettempdir()
    h = hashlib.sha256(os.path.realpath(dest).encode()).hexdigest()[:32]
    return os.path.join(d, "tensorfs-load-%s.lock" % h)


class Lock:
    """An exclusive flock on lock_path(dest), held inside a with block."""

    def __init__(self, dest: str):
        self.path = lock_path(dest)
        self.fd = -1

    def __enter__(self) -> "Lock":
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(self.fd)
            raise
        return self

    def __exit__(self, *exc) -> None:
        os.close(self.fd)            # drops the lock; the file stays (unlinking it would race)
        self.fd = -1


def shards(src: str) -> List[str]:
    """The safetensors files of the model directory src, in the index's order of first
    mention (else sorted); ValueError when there are none."""
    idx = os.path.join(src, "model.safetensors.index.json")
    if os.path.exists(idx):
        with open(idx) as f:
            wm = json.load(f).get("weight_map")
        if not isinstance(wm, dict):
            raise ValueError("%s: no weight_map" % idx)
        names: List[str] = []
        for v in wm.values():
            if not isinstance(v, str) or "/" in v or v.startswith("."):
                raise ValueError("%s: bad shard name %r" % (idx, v))
            if v not in names:
                names.append(v)
    else:
        names = sorted(n for n in os.listdir(src) if n.endswith(".safetensors"))
    if not names:
        raise ValueError("%s: no *.safetensors" % src)
    return [os.path.join(src, n) for n in names]


def small_files(src: str) -> List[str]:
    """The names of src's small files kept beside the weights (*.json, *.txt, *.model,
    *.jinja, *.md: config, generation config, tokenizer, index)."""
    return sorted(n for n in os.listdir(src) if n.endswith(_SMALL) and not n.startswith(".")
                  and os.path.isfile(os.path.join(src, n)))


def _header(path: str) -> Tuple[int, Dict[str, dict]]:
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise ValueError("%s: not a safetensors file (short)" % path)
        n = struct.unpack("<Q", raw)[0]
        if n > _MAX_HEADER:
            raise ValueError("%s: safetensors header of %d bytes" % (path, n))
        h = json.loads(f.read(n))
        size = os.fstat(f.fileno()).st_size
    h.pop("__metadata__", None)
    for k, v in h.items():
        a, b = v["data_offsets"]
        if v["dtype"] not in _ST_DTYPES or not 0 <= a <= b or 8 + n + b > size:
            raise ValueError("%s: tensor %r: bad dtype or offsets" % (path, k))
    return 8 + n, h


def _py_load(src: str, dest: str) -> None:
    plan = []                                     # (key, shard, base, entry)
    seen: Dict[str, str] = {}
    for s in shards(src):
        base, h = _header(s)
        for k, v in h.items():
            if k in seen:
                raise ValueError("key %r is in both %s and %s" % (k, seen[k], s))
            seen[k] = s
            plan.append((k, s, base, v))
    smalls = small_files(src)
    for n in smalls:
        if n in seen:
            raise ValueError("key %r collides with the file %s" % (n, os.path.join(src, n)))
    os.mkdir(dest)
    try:
        maps: Dict[str, mmap.mmap] = {}
        try:
            for k, s, base, v in plan:
                p = os.path.join(dest, *k.split("/"))
                os.makedirs(os.path.dirname(p), exist_ok=True)
                a, b = v["data_offsets"]
                with _tensor.create(p, _ST_DTYPES[v["dtype"]], v["shape"]) as t:
                    if b > a:
                        if s not in maps:
                            with open(s, "rb") as f:
                                maps[s] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
                        t.write(memoryview(maps[s])[base + a:base + b])
        finally:
            for m in maps.values():
                try:
                    m.close()
                except BufferError:
                    pass
        for n in smalls:
            with open(os.path.join(src, n), "rb") as f:
                data = f.read()
            with _tensor.create(os.path.join(dest, n), "u8", [len(data)]) as t:
                t.write(data)
    except BaseException:
        _files.rm(dest, recursive=True, missing_ok=True)
        raise


def load_model_dir(src: str, dest: str) -> None:
    """Loads the model directory src into dest (which must not exist); on failure dest
    is not left behind."""
    if not os.path.isdir(src):
        _files.load(src, dest)
        return
    try:
        _files.load(src, dest)
        return
    except Error as e:
        # A library without directory loads refuses the directory as a file.
        if e.errno not in (errno.EISDIR, errno.EINVAL, errno.ENOTSUP, errno.EBADMSG) \
                or os.path.exists(dest):
            raise
    _py_load(src, dest)


def ensure_loaded(src: str, dest: str) -> bool:
    """Loads src into dest unless dest exists, under dest's lock; True when this call
    loaded it."""
    with Lock(dest):
        if os.path.exists(dest):
            return False
        load_model_dir(src, dest)
        return True
