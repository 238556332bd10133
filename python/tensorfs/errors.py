"""tensorfs.Error: an OSError carrying the errno and the library's message.

An error whose errno has a builtin OSError subclass is also an instance of it, so
`except FileNotFoundError` and `except tensorfs.Error` both catch a missing tensor.
"""
import errno as _errno
import os
from typing import Dict, Optional, Tuple, Type


class Error(OSError):
    """A failed tensorfs call: .errno (positive), .strerror (the library's sentence about
    the failure, or the errno's generic text), .filename (the path or name when known)."""


_BUILTIN: Dict[int, Type[OSError]] = {
    _errno.ENOENT: FileNotFoundError,
    _errno.EEXIST: FileExistsError,
    _errno.EACCES: PermissionError,
    _errno.EPERM: PermissionError,
    _errno.EISDIR: IsADirectoryError,
    _errno.ENOTDIR: NotADirectoryError,
    _errno.ETIMEDOUT: TimeoutError,
    _errno.ECONNREFUSED: ConnectionRefusedError,
    _errno.EINTR: InterruptedError,
}
_classes: Dict[Tuple[int, ...], Type[Error]] = {}


def _class_for(err: int) -> Type[Error]:
    base = _BUILTIN.get(err)
    if base is None:
        return Error
    cls = _classes.get((err,))
    if cls is None:
        cls = type(base.__name__, (Error, base), {"__module__": __name__,
                                                  "__doc__": Error.__doc__})
        _classes[(err,)] = cls
    return cls


def make_error(err: int, message: Optional[str] = None,
               filename: Optional[str] = None) -> Error:
    """An Error for errno err (either sign) with message (default: its strerror)."""
    err = abs(err)
    msg = message or os.strerror(err)
    if filename is None:
        return _class_for(err)(err, msg)
    return _class_for(err)(err, msg, filename)


def lib_error(rc: int, filename: Optional[str] = None) -> Error:
    """The Error for a libtensorfs return code: its thread's tfs_errmsg() when set."""
    from . import _lib
    m = _lib.tfs_errmsg()
    text = m.decode("utf-8", "replace") if m else ""
    return make_error(rc, text or None, filename)


def errno_from_text(text: str) -> int:
    """The errno whose strerror ends text (how tensorctl words its failures), else EIO."""
    for code in sorted(_errno.errorcode):
        if text.rstrip().endswith(os.strerror(code)):
            return code
    return _errno.EIO
