"""ls, info, rm, load and save: tensors as files of the mount.

load and save go through one function, _convert(), which today runs the tensorctl binary
(tools/tensorctl: safetensors, npy and raw, checked headers, nothing left behind on
failure); it is the one place to switch to a library call.
"""
import errno
import json
import os
import shutil
import subprocess
from typing import Any, Dict, List, Optional, Sequence

from . import _lib, dtypes
from .errors import errno_from_text, make_error
from .tensor import PathLike, Tensor, _fspath, open as _open, shape_tuple

FORMATS = ("raw", "npy", "safetensors")


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
    uid, gid, ctime, mtime. ENODATA (a tensorfs.Error) for a directory or a file that is
    not a tensor."""
    p = _fspath(path)
    try:
        raw = os.getxattr(p, "user.tensor.meta")
    except OSError as e:
        raise _oserror(e, p) from None
    try:
        meta = json.loads(raw)
    except ValueError:
        raise make_error(errno.EBADMSG, "%s: malformed user.tensor.meta" % p, p) from None
    if "dtype" in meta:
        meta["dtype"] = dtypes.from_short(meta["dtype"])
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


def _convert(args: List[str]) -> None:
    """Runs one load/save. Raises tensorfs.Error with the converter's message."""
    ctl = _lib.tensorctl_path()
    if not ctl:
        raise make_error(errno.ENOENT, "tensorctl not found (beside libtensorfs, on PATH, or "
                         "$TENSORFS_TENSORCTL)")
    env = dict(os.environ)
    env.pop("TENSORFS_MOUNT", None)          # names given here are paths, never relative to it
    r = subprocess.run([ctl] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env)
    if r.returncode != 0:
        msg = r.stderr.decode("utf-8", "replace").strip().splitlines()
        text = msg[-1] if msg else "%s exited %d" % (ctl, r.returncode)
        if text.startswith("tensorctl: "):
            text = text[len("tensorctl: "):]
        raise make_error(errno_from_text(text), text)


def _fmt(fmt: Optional[str]) -> List[str]:
    if fmt is None:
        return []
    if fmt not in FORMATS:
        raise ValueError("format must be one of %s, not %r" % (", ".join(FORMATS), fmt))
    return ["--format", fmt]


def _abs(p: str) -> str:
    # tensorctl takes a relative name under $TENSORFS_MOUNT; ours are relative to the cwd.
    return os.path.abspath(p)


def load(file: PathLike, dest: PathLike, format: Optional[str] = None, dtype: Any = None,
         shape: Optional[Sequence[int]] = None, device: Optional[int] = None) -> Optional[Tensor]:
    """Copies a .safetensors, .npy or raw file into the mount at dest (which must not
    exist). A .safetensors file becomes the directory dest with one tensor per entry
    (None is returned); npy and raw give one tensor, returned opened read-only. format is
    taken from the file's first bytes or its name unless given; a raw file is uint8 1-D
    unless dtype and shape say otherwise. Nothing is left behind on failure."""
    args = ["load", "-q"] + _fmt(format)
    if dtype is not None:
        args += ["--dtype", dtypes.short_name(dtypes.code(dtype))]
    if shape is not None:
        args += ["--shape", "[" + ",".join(str(d) for d in shape_tuple(shape)) + "]"]
    if device is not None:
        args += ["--device", str(int(device))]
    d = _abs(_fspath(dest))
    _convert(args + ["--", _abs(_fspath(file)), d])
    return None if os.path.isdir(d) else _open(d)


def save(src: PathLike, file: PathLike, format: Optional[str] = None,
         overwrite: bool = False) -> None:
    """Writes the tensor src as raw bytes or .npy, or the directory src as one
    .safetensors file (format from the argument, else the file's extension). file must
    not exist unless overwrite; a failed save leaves nothing."""
    args = ["save", "-q"] + _fmt(format) + (["-f"] if overwrite else [])
    _convert(args + ["--", _abs(_fspath(src)), _abs(_fspath(file))])
