"""tensorfs.connect: the lifecycle queue client (tfs_connect, tfs_create/get/delete).

The queue names tensors by their path inside the mount ("models/w"), not by a path on this
machine. A tensor got through the queue is held by this process (node, pid) until
delete(name) releases it, or until the daemon sees the process gone.
"""
import json
import os
from ctypes import byref, c_int64, c_void_p
from typing import Any, Optional, Sequence, Union

from . import _lib, dtypes
from .errors import lib_error
from .tensor import Tensor, shape_tuple


def redact_url(url: str) -> str:
    """url with its password written as *** (redis://user:***@host), as the library finds
    it (core/secret.c): the only form a URL takes in an error message."""
    sep = url.find("://")
    if sep < 0:
        return url
    p = sep + 3
    if url[max(0, sep - 4):sep] == "unix":
        if url[p:p + 1] == "/":
            return url
        at = url.find("@", p)
    else:
        slash = url.find("/", p)
        at = url.rfind("@", p, slash if slash >= 0 else len(url))
    if at < 0:
        return url
    colon = url.find(":", p, at)
    start = colon + 1 if colon >= 0 else p
    return url if start == at else url[:start] + "***" + url[at:]


def _name(name: str) -> bytes:
    if not isinstance(name, str) or not name:
        raise ValueError("a tensor name must be a non-empty str, not %r" % (name,))
    if "\0" in name:
        raise ValueError("tensor name contains a NUL character")
    return name.encode()


class Client:
    """A connection to the Redis of a tensorfs daemon. Thread-safe (the library serialises
    commands); close() or a with block disconnects. Tensors got through it stay valid
    after close()."""

    def __init__(self, url: str, timeout_ms: int = 5000, queue: Optional[str] = None,
                 node: Optional[str] = None, lease: int = 0):
        if not isinstance(url, str) or "\0" in url:
            raise ValueError("url must be a str such as redis://host:6379 or unix:///path")
        self.url = redact_url(url)
        h = c_void_p()
        rc = _lib.tfs_connect(url.encode(), int(timeout_ms), byref(h))
        if rc:
            raise lib_error(rc, self.url)
        self._h: Optional[int] = h.value
        try:
            if queue is not None:
                rc = _lib.tfs_client_set_queue(self._h, _name(queue))
                if rc:
                    raise lib_error(rc, queue)
            if node is not None:
                rc = _lib.tfs_client_set_node(self._h, _name(node))
                if rc:
                    raise lib_error(rc, node)
            if lease:
                self.set_lease(lease)
        except BaseException:
            self.close()
            raise

    def _handle(self) -> int:
        if self._h is None:
            raise ValueError("operation on a closed tensorfs.Client")
        return self._h

    def create(self, name: str, dtype: Any, shape: Sequence[int],
               device: Optional[Union[int, str]] = None) -> Tensor:
        """Makes the tensor name (zero-filled) through the queue, then gets it: the
        Tensor returned is held by this process (release it with delete(name); a second
        delete removes the name). Raises FileExistsError, ENOENT (no parent directory),
        ENOSPC, ETIMEDOUT (no daemon serves the queue) as tensorfs.Error."""
        dt = dtypes.code(dtype)
        dims = shape_tuple(shape)
        dev = _lib.device_code(device)
        arr = (c_int64 * max(len(dims), 1))(*dims)
        rc = _lib.tfs_create(self._handle(), _name(name), dt, len(dims), arr, dev)
        if rc:
            raise lib_error(rc, name)
        return self.get(name)

    def get(self, name: str) -> Tensor:
        """Records this process as a holder of name and opens the tensor."""
        out = c_void_p()
        rc = _lib.tfs_get(self._handle(), _name(name), byref(out))
        if rc:
            raise lib_error(rc, name)
        return Tensor(out.value, None)

    def delete(self, name: str) -> None:
        """Releases this process's hold on name when it has one, else removes the name
        (the memory goes when nothing else holds it)."""
        rc = _lib.tfs_delete(self._handle(), _name(name))
        if rc:
            raise lib_error(rc, name)

    def set_lease(self, seconds: int) -> None:
        """Holds that get() takes from now on last seconds (1..86400) unless renew()
        renews them in time: for a process the daemon cannot see (another machine, a
        container, another pid namespace). 0, the default: a hold lasts while this
        process lives. ValueError outside 0..86400."""
        if isinstance(seconds, bool) or not isinstance(seconds, int) or \
                not 0 <= seconds <= 86400:
            raise ValueError("lease must be whole seconds in 0..86400, not %r" % (seconds,))
        rc = _lib.tfs_client_set_lease(self._handle(), seconds)
        if rc:
            raise lib_error(rc, self.url)

    def renew(self, name: str) -> None:
        """Extends this process's leased hold on name by the lease from now (tfs_renew);
        ESRCH as tensorfs.Error when this process holds nothing of that name."""
        rc = _lib.tfs_renew(self._handle(), _name(name))
        if rc:
            raise lib_error(rc, name)

    def close(self) -> None:
        """Disconnects; the Tensors got through the client stay valid. Idempotent."""
        h, self._h = self._h, None
        if h is not None:
            _lib.tfs_disconnect(h)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_h", None) is not None and _lib is not None:
            self.close()


STATS_XATTR = "user.tensorfs.stats"


def mount_node(path: Any) -> str:
    """The node name (--node) of the daemon serving the tensorfs mount that holds path:
    the "node" of the JSON attribute user.tensorfs.stats its root publishes. Raises
    tensorfs.Error: ENOTSUP when path is on no tensorfs mount, the OSError of a path that
    cannot be read."""
    from .errors import make_error
    import errno
    p = os.path.abspath(os.fsdecode(os.fspath(path)))
    while True:
        try:
            raw = os.getxattr(p, STATS_XATTR)
        except OSError as e:
            if e.errno not in (errno.ENODATA, errno.ENOTSUP, errno.EOPNOTSUPP):
                raise make_error(e.errno or errno.EIO, "%s: %s" % (p, e.strerror), p) from None
            raw = None
        if raw is not None:
            try:
                node = json.loads(raw).get("node")
            except (ValueError, AttributeError):
                node = None
            if isinstance(node, str) and node:
                return node
            raise make_error(errno.EBADMSG, "%s: %s names no node" % (p, STATS_XATTR), p)
        # the attribute is the root's only: climb to the mount point
        if os.path.ismount(p) or os.path.dirname(p) == p:
            raise make_error(errno.ENOTSUP, "%s: not on a tensorfs mount" % p, p)
        p = os.path.dirname(p)


def connect(url: str, timeout_ms: int = 5000, queue: Optional[str] = None,
            node: Optional[str] = None, mount: Any = None, lease: int = 0) -> Client:
    """Connects to a tensorfs daemon's Redis: redis://[[user]:password@]host[:port][/db],
    unix://[[user]:password@]/path/to/socket or
    sentinel://[[user]:password@]host:port[,host:port...]/mastername[?db=N] (the primary
    Redis Sentinel names, asked again at each reconnection). A URL without a password takes the
    environment's TENSORFS_REDIS_PASSWORD, if set (keep passwords off command lines).
    timeout_ms bounds connecting and each command's wait; queue (default
    "tensor_lifecycle") as in tfs_client_set_queue; lease as in Client.set_lease.

    The node sent with commands must be the daemon's --node, or the daemon refuses
    holds it cannot check (EHOSTDOWN). It is, in order: node; the node of the mount
    that holds the path mount (see mount_node); $TENSORFS_NODE; the node of the mount
    at $TENSORFS_MOUNT; else the host name (the daemon's default --node)."""
    if node is None and mount is not None:
        node = mount_node(mount)
    if node is None and os.environ.get("TENSORFS_NODE"):
        node = os.environ["TENSORFS_NODE"]
    if node is None and os.environ.get("TENSORFS_MOUNT"):
        try:
            node = mount_node(os.environ["TENSORFS_MOUNT"])
        except OSError:
            node = None
    return Client(url, timeout_ms, queue, node, lease)


