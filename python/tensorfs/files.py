"""ls, info, rm, load and save: tensors as files of the mount.

load and save call libtensorfs's tfs_load and tfs_save (the parallel loader tensorctl uses:
safetensors, npy and raw, checked headers, nothing left behind on failure).
"""
import ctypes
import errno
import json
import os
import shutil
from typing import Any, Dict, List, Optional, Sequence

from . import _lib, dtypes
from .errors import lib_error, make_error
from .tensor import PathLike, Tensor, _fspath, open as _open, shape_tuple

FORMATS = ("raw", "npy", "safetensors", "dir")


def _oserror(e: OSError, p: str):
    return make_error(e.errno or errno.EIO, "%s: %s" % (p, e.strerror), p)


def ls(path: PathLike = ".") -> List[str]:
    """The entries of a directory of the mount, sorted; directories end with "/"."""
    p = _fspath(path)
    try:
        with os.scandir(p) as it:
            return sorted(e.name + "/" if e.is_dir(follow_symlinks=False) else e.name
                          for e in it)
    except OSError as e:
        raise _oserror(e, p) from None


def info(path: PathLike) -> Dict[str, Any]:
    """The tensor's metadata (user.tensor.meta) as a dict, dtype spelled as numpy does:
    dtype, shape, bytes, device, node, backend, refcount, ipc_handle, ipc_offset, mode,
    uid, gid, ctime, mtime, ino (the file's st_ino, an int; JSON carries it as a string
    because it takes 63 bits), ctime_ns (its st_ctim in nanoseconds, an int, carried the
    same way). ENODATA (a tensorfs.Error) for a directory or a file that
    is not a tensor."""
    p = _fspath(path)
    try:
        raw = os.getxattr(p, "user.tensor.meta")
    except OSError as e:
        raise _oserror(e, p) from None
    return _parse_meta(raw, p)


def _parse_meta(raw: bytes, p: str) -> Dict[str, Any]:
    """user.tensor.meta's text as info() gives it; any bytes (a file elsewhere can carry
    that attribute too): EBADMSG (a tensorfs.Error) for what is not a JSON object."""
    try:
        meta = json.loads(raw)
    except (ValueError, RecursionError):      # bad UTF-8 is a ValueError too
        meta = None
    if not isinstance(meta, dict):
        raise make_error(errno.EBADMSG, "%s: malformed user.tensor.meta" % p, p)
    if isinstance(meta.get("dtype"), str):
        meta["dtype"] = dtypes.from_short(meta["dtype"])
    for key in ("ino", "ctime_ns"):       # decimal strings: JSON numbers would round them
        v = meta.get(key)
        if isinstance(v, str) and v.isascii() and v.isdigit() and len(v) <= 19:
            meta[key] = int(v)
    return meta


def rm(path: PathLike, recursive: bool = False, missing_ok: bool = False) -> None:
    """Removes a tensor (its memory goes when the last holder lets go), or with recursive
    a directory and everything under it."""
    p = _fspath(path)
    try:
        if recursive and os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        else:
            os.unlink(p)
    except FileNotFoundError:
        if not missing_ok:
            raise make_error(errno.ENOENT, "%s: %s" % (p, os.strerror(errno.ENOENT)), p) from None
    except OSError as e:
        raise _oserror(e, p) from None


def _format_code(fmt: Optional[str]) -> int:
    """enum tfs_format: 0 auto, then FORMATS in order."""
    if fmt is None:
        return 0
    if fmt not in FORMATS:
        raise ValueError("format must be one of %s, not %r" % (", ".join(FORMATS), fmt))
    return 1 + FORMATS.index(fmt)


def _abs(p: str) -> str:
    # tensorctl takes a relative name under $TENSORFS_MOUNT; ours are relative to the cwd.
    return os.path.abspath(p)


def load(file: PathLike, dest: PathLike, format: Optional[str] = None, dtype: Any = None,
         shape: Optional[Sequence[int]] = None, device: Optional[Any] = None,
         merge: bool = False) -> Optional[Tensor]:
    """Copies a .safetensors, .npy or raw file into the mount at dest (which must not
    exist). A .safetensors file becomes the directory dest with one tensor per entry
    (None is returned); npy and raw give one tensor, returned opened read-only. format is
    taken from the file's first bytes or its name unless given; a raw file is uint8 1-D
    unless dtype and shape say otherwise. Nothing is left behind on failure.

    file may be a Hugging Face model directory: every shard its
    model.safetensors.index.json names (else every *.safetensors) becomes one directory
    dest of tensors named by their keys, and its *.json, *.model, *.txt and *.jinja files
    u8 tensors of their bytes beside them (None is returned). A key in two shards, or
    named like one of those files, raises FileExistsError before anything is made.
    merge: dest may be an existing directory, none of the names existing in it."""
    if format == "dir":
        format = None
    o = _lib.LoadOpts()
    _lib.tfs_load_opts_init(o)
    o.merge = 1 if merge else 0
    o.format = _format_code(format)
    if dtype is not None:
        o.dtype = dtypes.code(dtype)
    if shape is not None:
        dims = shape_tuple(shape)
        if len(dims) > len(o.shape):
            raise ValueError("at most %d dimensions" % len(o.shape))
        o.ndim = len(dims)
        for i, n in enumerate(dims):
            o.shape[i] = n
    if device is not None:
        o.device = _lib.device_code(device)
    d = _abs(_fspath(dest))
    rc = _lib.tfs_load(os.fsencode(_abs(_fspath(file))), os.fsencode(d), o)
    if rc:
        raise lib_error(rc, d)
    return None if os.path.isdir(d) else _open(d)


def save(src: PathLike, file: PathLike, format: Optional[str] = None,
         overwrite: bool = False) -> None:
    """Writes the tensor src as raw bytes or .npy, or the directory src as one
    .safetensors file (format from the argument, else the file's extension). file must
    not exist unless overwrite; a failed save leaves nothing.

    A directory that load() made of a model directory (it holds config.json or
    model.safetensors.index.json), or format="dir", is written as a model directory that
    transformers' from_pretrained(file) reads: the small files back as files, the
    tensors into shards as the stored index assigns them with a new index (its
    metadata.total_size updated), else into one model.safetensors."""
    o = _lib.SaveOpts()
    _lib.tfs_save_opts_init(o)
    o.format = _format_code(format)
    o.replace = 1 if overwrite else 0
    f = _abs(_fspath(file))
    rc = _lib.tfs_save(os.fsencode(_abs(_fspath(src))), os.fsencode(f), o)
    if rc:
        raise lib_error(rc, f)


def copy(src: PathLike, dest: PathLike, threads: int = 0, progress: Any = None) -> None:
    """Copies the tensor src, or the directory src with every tensor under it, into new
    tensors at dest (which must not exist) on dest's mount: its dtypes, shapes, bytes and
    the directories' own attributes (libtensorfs's tfs_copy, what tensorctl cp -r does).
    src may be another node's (docs/net.md): this is how a node takes a replica of
    another's model. threads: copy threads (0: 8). progress: None or a callable
    (done_bytes, total_bytes), called about ten times a second and once at the end. All
    or nothing: on failure nothing is left at dest and tensorfs.Error says why."""
    o = _lib.CopyOpts()
    _lib.tfs_copy_opts_init(o)
    o.recursive = 1
    o.threads = int(threads)
    cb = None
    if progress is not None:
        cb = _lib.COPY_PROGRESS(lambda _arg, done, total: progress(done, total))
        o.progress = ctypes.cast(cb, ctypes.c_void_p)
    d = _abs(_fspath(dest))
    rc = _lib.tfs_copy(os.fsencode(_abs(_fspath(src))), os.fsencode(d), o)
    if rc:
        raise lib_error(rc, d)


def release_buffers() -> None:
    """Frees the pinned host buffers that load() and save() keep for their next calls
    (tfs_load_release). Call it when no load or save runs in this process."""
    _lib.tfs_load_release()


def move(path: PathLike, device: Any, threads: int = 0) -> None:
    """Moves the tensor at path, or every tensor under the directory path, to device:
    "cpu" (host memory: sleep) or a GPU ordinal (wake), several at once, all or none
    (libtensorfs's tfs_move, docs/tiers.md): when one move fails, those made go back and
    tensorfs.Error names the tensor that failed (EBUSY: another process holds it; ENOSPC:
    the tier is full; EBADMSG: its bytes changed in host memory while it slept)."""
    dev = _lib.device_code(device)
    if dev < 0 and dev != _lib.DEVICE_CPU:
        raise ValueError('device must be "cpu" or a GPU ordinal >= 0, not None')
    o = _lib.MoveOpts()
    o.threads = int(threads)
    p = _abs(_fspath(path))
    rc = _lib.tfs_move(os.fsencode(p), dev, o)
    if rc:
        raise lib_error(rc, p)
