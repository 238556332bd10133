"""tensorfs.Tensor, and opening, creating and publishing tensors by path.

A Tensor holds one libtensorfs reference (tfs_tensor: an open descriptor on the tensor's
file plus the mapping). Each DLPack export holds a reference of its own, so an array made
with from_dlpack keeps the memory mapped after Tensor.close(), until the array goes.
"""
import ctypes
import errno
import json
import os
from ctypes import byref, c_int32, c_void_p
from typing import Any, Optional, Sequence, Tuple, Union

from . import _dlpack, _lib, dtypes
from .errors import Error, lib_error, make_error

_MODES = {"r": os.O_RDONLY, "r+": os.O_RDWR, "rw": os.O_RDWR}
PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]


class Tensor:
    """An opened tensor. Exports DLPack (numpy.from_dlpack for host tensors,
    torch/cupy/jax from_dlpack for GPU ones), copies bytes with read()/write(), and is
    released by close() or a with block. Attributes: path, dtype (numpy/torch name),
    shape, ndim, nbytes, device ("cpu" or "cuda:N"), device_index, writable, data_ptr."""

    __slots__ = ("_h", "path", "dtype", "shape", "nbytes", "device", "device_index",
                 "on_host", "writable", "data_ptr", "__weakref__")

    def __init__(self, handle: int, path: Optional[str] = None):
        """Wraps a tfs_tensor* (taking its reference); use tensorfs.open() instead."""
        info = _lib.TensorInfo()
        rc = _lib.tfs_tensor_get_info(handle, byref(info))
        if rc:
            _lib.tfs_close(handle)
            raise lib_error(rc, path)
        self._h = handle
        self.path = path
        self.dtype: str = dtypes.name(info.dtype)
        self.shape: Tuple[int, ...] = tuple(info.shape[:info.ndim])
        self.nbytes: int = info.bytes
        self.on_host: bool = bool(info.on_host)
        self.device_index: int = info.device if info.device >= 0 else 0
        self.device: str = "cpu" if info.on_host else "cuda:%d" % info.device
        self.writable: bool = bool(info.writable)
        self.data_ptr: int = info.data or 0

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def closed(self) -> bool:
        return self._h is None

    def _handle(self) -> int:
        if self._h is None:
            raise ValueError("operation on a closed tensorfs.Tensor")
        return self._h

    def close(self) -> None:
        """Drops this object's reference (arrays made from it keep theirs). Idempotent."""
        h, self._h = self._h, None
        if h is not None:
            rc = _lib.tfs_close(h)
            if rc:
                raise lib_error(rc, self.path)

    def __enter__(self) -> "Tensor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        h, self._h = getattr(self, "_h", None), None
        if h is not None and _lib is not None:
            _lib.tfs_close(h)

    def __repr__(self) -> str:
        return "<tensorfs.Tensor %s %s%s on %s%s>" % (
            self.path or "(queue)", self.dtype, list(self.shape), self.device,
            ", closed" if self._h is None else "")

    # DLPack (the Python array API's protocol)
    def __dlpack_device__(self) -> Tuple[int, int]:
        """(kDLCUDA, ordinal) on a GPU; on the host (kDLCUDAHost, 0) when this process
        registered the memory with CUDA (cudaHostRegister: copies to a GPU then run at
        pinned speed), else (kDLCPU, 0)."""
        kind, idx = c_int32(), c_int32()
        rc = _lib.tfs_dlpack_device(self._handle(), byref(kind), byref(idx))
        if rc:
            raise lib_error(rc, self.path)
        return (kind.value, idx.value)

    def __dlpack__(self, stream: Optional[int] = None,
                   max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> Any:
        """A "dltensor" capsule viewing this tensor's memory (no copy). stream is accepted
        and needs no synchronisation: tensorfs memory has no work pending in this process
        (tfs_write is synchronous). A versioned capsule is never made (max_version
        consumers accept the legacy one). Pinned host memory (kDLCUDAHost) is also
        exported as kDLCPU to a consumer that asks for dl_device=(1, 0): torch, for one,
        takes no kDLCUDAHost."""
        if copy:
            raise BufferError("tensorfs exports its memory only without copying")
        dev = self.__dlpack_device__()
        as_cpu = (dl_device is not None and tuple(dl_device) == (_dlpack.KDL_CPU, 0)
                  and dev[0] == _dlpack.KDL_CUDA_HOST)
        if dl_device is not None and tuple(dl_device) != dev and not as_cpu:
            raise BufferError("tensorfs tensor is on %s, not on DLPack device %r"
                              % (self.device, tuple(dl_device)))
        out = c_void_p()
        rc = _lib.tfs_to_dlpack(self._handle(), byref(out))
        if rc:
            raise lib_error(rc, self.path)
        if as_cpu:
            _dlpack.set_device(out.value, _dlpack.KDL_CPU, 0)
        return _dlpack.capsule(out.value)

    def numpy(self) -> Any:
        """A numpy array viewing this host tensor's memory (no copy), writable when the
        tensor was opened "r+" (read-only otherwise), on any numpy (numpy.from_dlpack
        before 2.1 gives read-only views). The array holds a reference of its own (a
        DLPack export): it stays valid after close(), until it goes. TypeError for a
        GPU tensor (use torch.from_dlpack or cupy.from_dlpack) and for a dtype numpy
        lacks (bf16, fp8: read() the bytes, or view them as torch tensors); tensorfs.Error
        EREMOTE for another node's tensor whose memory does not map here (read() it)."""
        if self.nbytes and not self.data_ptr:
            # Nothing mapped (another node's memory, out of reach): the library says
            # why, numpy or not.
            out = c_void_p()
            rc = _lib.tfs_to_dlpack(self._handle(), byref(out))
            if rc:
                raise lib_error(rc, self.path)
            _dlpack.capsule(out.value)
        import numpy
        if not self.on_host:
            raise TypeError("%s is on %s: numpy views host memory only; use a GPU "
                            "framework's from_dlpack" % (self.path or "the tensor", self.device))
        try:
            dt = numpy.dtype(self.dtype)
        except TypeError:
            raise TypeError("numpy has no dtype %s; read() gives the bytes" % self.dtype) from None
        out = c_void_p()
        rc = _lib.tfs_to_dlpack(self._handle(), byref(out))
        if rc:
            raise lib_error(rc, self.path)
        keep = _dlpack.capsule(out.value)    # unconsumed: its destructor lets go
        if self.nbytes == 0:
            arr = numpy.empty(self.shape, dt)
        else:
            buf = (ctypes.c_char * self.nbytes).from_address(self.data_ptr)
            buf._tfs_export = keep      # the mapping lives while the array does
            arr = numpy.frombuffer(buf, dtype=dt).reshape(self.shape)
        if not self.writable:
            arr.flags.writeable = False
        return arr

    # Direct copies, without FUSE
    def read(self, offset: int = 0, size: Optional[int] = None) -> bytes:
        """size bytes from offset (default: to the end) as bytes. Another node's tensor
        whose memory does not map here is read through the mount (its daemon asks the
        owning node)."""
        if size is None:
            size = max(self.nbytes - offset, 0)
        if offset < 0 or size < 0:
            raise ValueError("negative offset or size")
        buf = ctypes.create_string_buffer(size)
        rc = _lib.tfs_read(self._handle(), offset, buf, size)
        if rc:
            raise lib_error(rc, self.path)
        return buf.raw

    def write(self, data: Any, offset: int = 0) -> int:
        """Copies a bytes-like object (C-contiguous buffer) to offset; returns its length."""
        if offset < 0:
            raise ValueError("negative offset")
        mv = memoryview(data)
        if not mv.c_contiguous:
            raise ValueError("write() needs a C-contiguous buffer")
        mv = mv.cast("B")
        n = mv.nbytes
        if n == 0:
            buf = ctypes.create_string_buffer(1)      # tfs_write refuses a NULL buffer
        elif mv.readonly:
            buf = (ctypes.c_char * n).from_buffer_copy(mv)
        else:
            buf = (ctypes.c_char * n).from_buffer(mv)
        ptr = ctypes.cast(buf, c_void_p)
        rc = _lib.tfs_write(self._handle(), offset, ptr, n)
        if rc:
            raise lib_error(rc, self.path)
        return n

    def mark_written(self, stream: int = 0) -> None:
        """Records that the bytes are written (a CUDA event on stream for other processes;
        a fence on the host backend)."""
        rc = _lib.tfs_mark_written(self._handle(), stream or None)
        if rc:
            raise lib_error(rc, self.path)

    def wait_written(self, stream: int = 0) -> None:
        """Makes stream wait for the last mark_written of any process."""
        rc = _lib.tfs_wait_written(self._handle(), stream or None)
        if rc:
            raise lib_error(rc, self.path)


def _fspath(path: PathLike) -> str:
    p = os.fspath(path)
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if "\0" in p:
        raise ValueError("path contains a NUL character")
    return p


def open(path: PathLike, mode: str = "r") -> Tensor:  # noqa: A001 (the package's verb)
    """Opens the tensor file at path on a tensorfs mount: "r" read-only, "r+" read-write.
    The open file is the reference that keeps the memory alive (the kernel drops it when
    the process dies). Raises tensorfs.Error (ENOENT, EACCES, ENOTSUP when not on a
    tensorfs mount, ESTALE...), ValueError for a bad mode."""
    flags = _MODES.get(mode)
    if flags is None:
        raise ValueError("mode must be 'r' or 'r+', not %r" % (mode,))
    p = _fspath(path)
    out = c_void_p()
    rc = _lib.tfs_open(os.fsencode(p), flags, byref(out))
    if rc:
        raise lib_error(rc, p)
    return Tensor(out.value, p)


def _meta_json(meta: Any) -> bytes:
    """meta (JSON text or a dict) as the JSON bytes tfs_open_meta parses."""
    if isinstance(meta, dict):
        d = dict(meta)
        dt = d.get("dtype")
        if isinstance(dt, str):
            # info() spells the dtype as numpy does; the metadata as tensorfs does.
            d["dtype"] = dtypes.short_name(dtypes.code(dt))
        for key in ("ino", "ctime_ns"):     # and these two as strings
            v = d.get(key)
            if isinstance(v, int) and not isinstance(v, bool):
                d[key] = str(v)
        try:
            return json.dumps(d, separators=(",", ":")).encode()
        except (TypeError, ValueError) as e:
            raise TypeError("metadata dict is not JSON: %s" % e) from None
    if isinstance(meta, str):
        return meta.encode()
    if isinstance(meta, (bytes, bytearray, memoryview)):
        return bytes(meta)
    raise TypeError("metadata must be JSON text (str or bytes) or a dict, not %s"
                    % type(meta).__name__)


def open_meta(meta: Any) -> Tensor:
    """Maps a tensor from its metadata already in hand, without the mount: the JSON text
    (str or bytes) of a queue `get` reply or of the user.tensor.meta attribute, or that
    document as a dict (tensorfs.info's dict included). No FUSE request and no Redis:
    only the mapping of the IPC handle (which this process shares with other tensors of
    the same memory). It holds no reference of its own: the tensor must stay alive
    elsewhere for as long as the Tensor and the arrays made from it are used (a queue
    hold this process took with get, or a file the producer keeps), as with
    torch.multiprocessing's handles. The Tensor is writable; path is None. Raises
    tensorfs.Error: EBADMSG (malformed metadata or handle), ESTALE (the handle names
    memory that no longer exists), ENODEV (a CUDA handle without a usable GPU);
    TypeError for another type, ValueError for a dict whose dtype has no tensorfs name."""
    js = _meta_json(meta)
    out = c_void_p()
    rc = _lib.tfs_open_meta(js, len(js), byref(out))
    if rc:
        raise lib_error(rc, None)
    return Tensor(out.value, None)


def shape_tuple(shape: Any) -> Tuple[int, ...]:
    """shape as a tuple of non-negative ints (an int is a 1-D shape)."""
    if isinstance(shape, int):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError("shape must be a sequence of ints, not %r" % (shape,)) from None
    for d in dims:
        if isinstance(d, bool) or not hasattr(d, "__index__"):
            raise TypeError("shape must hold ints, not %r" % (d,))
        if d.__index__() < 0:
            raise ValueError("negative dimension in shape %r" % (dims,))
    if len(dims) > _lib.MAX_DIMS:
        raise ValueError("shape has %d dimensions (at most %d)" % (len(dims), _lib.MAX_DIMS))
    return tuple(d.__index__() for d in dims)


def _setxattr(p: str, name: str, value: str) -> None:
    try:
        os.setxattr(p, "user.tensor." + name, value.encode())
    except OSError as e:
        raise make_error(e.errno or errno.EIO, "%s: %s %s: %s" % (p, name, value, e.strerror),
                         p) from None


def _make(p: str, dt: int, dims: Sequence[int], device: Optional[Union[int, str]]) -> Tensor:
    """Creates the file with dtype, shape (and device), opened read-write. On failure
    nothing is left."""
    try:
        fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except OSError as e:
        raise make_error(e.errno or errno.EIO, "%s: %s" % (p, e.strerror), p) from None
    os.close(fd)
    try:
        if device is not None:
            _setxattr(p, "device", "cpu" if device == "cpu" else str(int(device)))
        _setxattr(p, "dtype", dtypes.short_name(dt))
        _setxattr(p, "shape", "[" + ",".join(str(d) for d in dims) + "]")
        return open(p, "r+")
    except BaseException:
        try:
            os.unlink(p)
        except OSError:
            pass
        raise


def create(path: PathLike, dtype: Any, shape: Sequence[int],
           device: Optional[Union[int, str]] = None) -> Tensor:
    """Makes a zero-filled tensor file at path (which must not exist) and opens it
    read-write. dtype: a numpy/torch name or dtype, or tensorfs' short name; shape: ints;
    device: the GPU ordinal, or "cpu" for host memory (default: the directory's, else
    the mount's). Raises
    FileExistsError (a tensorfs.Error), ENOSPC/EFBIG when it does not fit, ValueError or
    TypeError for a bad dtype or shape; nothing is left behind on failure."""
    dt = dtypes.code(dtype)
    dims = shape_tuple(shape)
    _lib.device_code(device)
    return _make(_fspath(path), dt, dims, device)


def _compact(t: "_dlpack.DLTensor", dims: Tuple[int, ...]) -> bool:
    if not t.strides:
        return True
    expect = 1
    for i in range(len(dims) - 1, -1, -1):
        if dims[i] != 1 and t.strides[i] != expect:
            return False
        expect *= dims[i]
    return True


# Buffer-protocol formats (struct module letters) -> kind; the size comes from itemsize.
_BUF_KINDS = {"?": "bool", "e": "float", "f": "float", "d": "float", "b": "int", "h": "int",
              "i": "int", "l": "int", "q": "int", "B": "uint", "H": "uint", "I": "uint",
              "L": "uint", "Q": "uint"}


def _buffer_dtype(mv: memoryview) -> int:
    fmt = mv.format
    if fmt[:1] in ("<", "=", "@"):     # native or little-endian: what this host is
        fmt = fmt[1:]
    kind = _BUF_KINDS.get(fmt)
    if kind is None:
        raise ValueError("buffer format %r has no tensorfs dtype" % mv.format)
    return dtypes.code("bool" if kind == "bool" else "%s%d" % (kind, mv.itemsize * 8))


def _unmake(p: str, out: Tensor) -> None:
    out.close()
    try:
        os.unlink(p)
    except OSError:
        pass


def _publish_buffer(p: str, obj: Any, device: Optional[Union[int, str]]) -> Tensor:
    mv = memoryview(obj)
    if not mv.c_contiguous:
        raise ValueError("publish() needs a C-contiguous array (numpy.ascontiguousarray)")
    dt = _buffer_dtype(mv)
    out = _make(p, dt, tuple(mv.shape or ()), device)
    try:
        out.write(mv)
    except BaseException:
        _unmake(p, out)
        raise
    return out


def _has_buffer(obj: Any) -> bool:
    try:
        memoryview(obj).release()
        return True
    except TypeError:
        return False


def publish(path: PathLike, array: Any, device: Optional[Union[int, str]] = None) -> Tensor:
    """Copies array into a new tensor at path and returns it opened read-write. array is
    anything with __dlpack__ (numpy, torch, cupy, jax; on the CPU or a GPU) or, when it
    has none or refuses to export (numpy before 2.0 and a read-only array), the buffer
    protocol (bytes: uint8). A GPU array is copied device to device; its GPU is the new
    tensor's unless device says otherwise. The array must be C-contiguous. Raises as
    create(), TypeError when array is neither, ValueError for a non-contiguous array or a
    dtype tensorfs lacks; nothing is left behind on failure."""
    p = _fspath(path)
    borrowed = None
    if hasattr(array, "__dlpack__"):
        try:
            borrowed = _dlpack.borrow(array)
        except BufferError:
            if not _has_buffer(array):
                raise
    elif not _has_buffer(array):
        raise TypeError("publish() needs an array with __dlpack__ or the buffer protocol, "
                        "not %s" % type(array).__name__)
    if borrowed is None:
        return _publish_buffer(p, array, device)
    with borrowed as b:
        t = b.tensor
        dims = tuple(t.shape[i] for i in range(t.ndim))
        dt = dtypes.from_dlpack(t.dtype.code, t.dtype.bits, t.dtype.lanes)
        if not _compact(t, dims):
            raise ValueError("publish() needs a C-contiguous array (call .contiguous() or "
                             "numpy.ascontiguousarray first)")
        kind = t.device.device_type
        if kind not in (_dlpack.KDL_CPU, _dlpack.KDL_CUDA, _dlpack.KDL_CUDA_HOST,
                        _dlpack.KDL_CUDA_MANAGED):
            raise ValueError("publish() takes CPU or CUDA arrays, not DLPack device type %d"
                             % kind)
        on_gpu = kind == _dlpack.KDL_CUDA
        if device is None and on_gpu:
            device = t.device.device_id
        out = _make(p, dt, dims, device)
        try:
            if on_gpu and out.on_host:
                raise make_error(errno.ENOTSUP, "%s: the mount runs the host backend, which "
                                 "cannot take a GPU array: copy it to the CPU first" % p, p)
            if out.nbytes:
                src = (t.data or 0) + t.byte_offset
                rc = _lib.tfs_write(out._handle(), 0, c_void_p(src), out.nbytes)
                if rc:
                    raise lib_error(rc, p)
        except BaseException:
            _unmake(p, out)
            raise
    return out


__all__ = ["Tensor", "open", "open_meta", "create", "publish", "Error"]
