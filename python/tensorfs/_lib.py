"""Loads libtensorfs and declares the C functions of lib/tensorfs.h for ctypes.

tests/python/test_binding.py holds these declarations to the header: every function of
tensorfs.h bound with its arguments, every mirrored struct with the compiler's layout.

Which library: $TENSORFS_LIBRARY (a path to libtensorfs.so), else the one recorded at
install time (setup.py), else the system's libtensorfs.so.0 (ld.so.conf, then
/usr/local/lib, where `make install` puts it). ctypes.CDLL releases the GIL during each
call, so a call that waits (tfs_get on the queue) never blocks other threads.
"""
import ctypes
import ctypes.util
import os
from ctypes import (POINTER, Structure, c_char_p, c_int, c_int32, c_int64, c_size_t,
                    c_uint64, c_void_p)
from typing import Any, List, Optional

MAX_DIMS = 16


class TensorInfo(Structure):
    """struct tfs_tensor_info."""
    _fields_ = [
        ("data", c_void_p),
        ("bytes", c_uint64),
        ("dtype", c_int),
        ("ndim", c_int),
        ("shape", c_int64 * MAX_DIMS),
        ("device", c_int),
        ("on_host", c_int),
        ("writable", c_int),
    ]


def _candidates() -> List[str]:
    out = []
    env = os.environ.get("TENSORFS_LIBRARY")
    if env:
        return [env]             # an explicit choice is never silently replaced
    try:
        from . import _config
        if _config.LIBRARY:
            out.append(_config.LIBRARY)
    except ImportError:          # running from the source tree: no install step ran
        here = os.path.dirname(os.path.abspath(__file__))
        out.append(os.path.join(here, "..", "..", "build", "libtensorfs.so"))
    out.append("libtensorfs.so.0")
    found = ctypes.util.find_library("tensorfs")
    if found:
        out.append(found)
    out.append("/usr/local/lib/libtensorfs.so.0")
    return out


def _load() -> ctypes.CDLL:
    errors = []
    for c in _candidates():
        if os.sep in c and not os.path.exists(c):
            errors.append("%s: no such file" % c)
            continue
        try:
            return ctypes.CDLL(c)
        except OSError as e:
            errors.append(str(e))
    raise ImportError("tensorfs: cannot load libtensorfs (build it with make, install it "
                      "with make install, or set TENSORFS_LIBRARY to its path): " +
                      "; ".join(errors))


lib = _load()
PATH = getattr(lib, "_name", "")


def _fn(name: str, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_p = POINTER(c_void_p)
tfs_strerror = _fn("tfs_strerror", c_char_p, c_int)
tfs_errmsg = _fn("tfs_errmsg", c_char_p)
tfs_open = _fn("tfs_open", c_int, c_char_p, c_int, _p)
tfs_open_fd = _fn("tfs_open_fd", c_int, c_int, _p)
tfs_open_meta = _fn("tfs_open_meta", c_int, c_char_p, c_size_t, _p)
tfs_close = _fn("tfs_close", c_int, c_void_p)
tfs_tensor_get_info = _fn("tfs_tensor_get_info", c_int, c_void_p, POINTER(TensorInfo))
tfs_tensor_data = _fn("tfs_tensor_data", c_void_p, c_void_p)
tfs_read = _fn("tfs_read", c_int, c_void_p, c_uint64, c_void_p, c_size_t)
tfs_write = _fn("tfs_write", c_int, c_void_p, c_uint64, c_void_p, c_size_t)
tfs_to_dlpack = _fn("tfs_to_dlpack", c_int, c_void_p, _p)
tfs_dlpack_device = _fn("tfs_dlpack_device", c_int, c_void_p, POINTER(c_int32),
                        POINTER(c_int32))
tfs_connect = _fn("tfs_connect", c_int, c_char_p, c_int, _p)
tfs_disconnect = _fn("tfs_disconnect", None, c_void_p)
tfs_client_set_queue = _fn("tfs_client_set_queue", c_int, c_void_p, c_char_p)
tfs_client_set_node = _fn("tfs_client_set_node", c_int, c_void_p, c_char_p)
tfs_client_set_lease = _fn("tfs_client_set_lease", c_int, c_void_p, c_int)
tfs_create = _fn("tfs_create", c_int, c_void_p, c_char_p, c_int, c_int, POINTER(c_int64), c_int)
tfs_get = _fn("tfs_get", c_int, c_void_p, c_char_p, _p)
tfs_delete = _fn("tfs_delete", c_int, c_void_p, c_char_p)


class CreateReq(Structure):
    """struct tfs_create_req (tensorfs.h): one item of tfs_create_many."""
    _fields_ = [("name", c_char_p), ("dtype", c_int), ("ndim", c_int),
                ("shape", POINTER(c_int64)), ("device", c_int)]


tfs_create_many = _fn("tfs_create_many", c_int, c_void_p, c_size_t, POINTER(CreateReq),
                      POINTER(c_int), POINTER(c_void_p))
tfs_unlink_many = _fn("tfs_unlink_many", c_int, c_void_p, c_size_t, POINTER(c_char_p),
                      POINTER(c_int))
tfs_renew = _fn("tfs_renew", c_int, c_void_p, c_char_p)
tfs_mark_written = _fn("tfs_mark_written", c_int, c_void_p, c_void_p)


class LoadOpts(Structure):
    """struct tfs_load_opts (tensorfs.h); filled by tfs_load_opts_init."""
    _fields_ = [("format", c_int), ("dtype", c_int), ("ndim", c_int),
                ("shape", c_int64 * MAX_DIMS), ("device", c_int), ("threads", c_int),
                ("via_file", c_int), ("progress", c_void_p), ("progress_arg", c_void_p),
                ("cancel", c_void_p), ("merge", c_int), ("direct", c_int)]


class SaveOpts(Structure):
    """struct tfs_save_opts (tensorfs.h); filled by tfs_save_opts_init."""
    _fields_ = [("format", c_int), ("threads", c_int), ("via_file", c_int),
                ("replace", c_int), ("progress", c_void_p), ("progress_arg", c_void_p),
                ("cancel", c_void_p)]


tfs_load_opts_init = _fn("tfs_load_opts_init", None, POINTER(LoadOpts))
tfs_save_opts_init = _fn("tfs_save_opts_init", None, POINTER(SaveOpts))
tfs_load = _fn("tfs_load", c_int, c_char_p, c_char_p, POINTER(LoadOpts))
tfs_save = _fn("tfs_save", c_int, c_char_p, c_char_p, POINTER(SaveOpts))
tfs_wait_written = _fn("tfs_wait_written", c_int, c_void_p, c_void_p)
tfs_load_release = _fn("tfs_load_release", None)

# The host tier's device number (tensorfs.h TFS_DEVICE_CPU).
DEVICE_CPU = -2


class CopyOpts(Structure):
    """struct tfs_copy_opts (tensorfs.h); filled by tfs_copy_opts_init."""
    _fields_ = [("recursive", c_int), ("threads", c_int), ("progress", c_void_p),
                ("progress_arg", c_void_p), ("cancel", c_void_p)]


# void (*progress)(void *arg, uint64_t done, uint64_t total) of tfs_copy_opts
COPY_PROGRESS = ctypes.CFUNCTYPE(None, c_void_p, ctypes.c_uint64, ctypes.c_uint64)
tfs_copy_opts_init = _fn("tfs_copy_opts_init", None, POINTER(CopyOpts))
tfs_copy = _fn("tfs_copy", c_int, c_char_p, c_char_p, POINTER(CopyOpts))


class MoveOpts(Structure):
    """struct tfs_move_opts (tensorfs.h)."""
    _fields_ = [("threads", c_int), ("progress", c_void_p), ("arg", c_void_p)]


tfs_move = _fn("tfs_move", c_int, c_char_p, c_int, POINTER(MoveOpts))


def device_code(device: Any) -> int:
    """device as libtensorfs takes it: None -> -1 (the default), "cpu" -> DEVICE_CPU (the
    host tier), a GPU ordinal >= 0 as it is; anything else raises ValueError."""
    if device is None:
        return -1
    if isinstance(device, str) and device == "cpu":
        return DEVICE_CPU
    if isinstance(device, bool) or not isinstance(device, int) or device < 0:
        raise ValueError('device must be "cpu" or a GPU ordinal >= 0, not %r' % (device,))
    return device
