"""DLPack capsules with ctypes: making one from tfs_to_dlpack, reading a framework's.

Protocol (DLPack's Python specification): a capsule named "dltensor" holds a
DLManagedTensor*. A consumer renames it "used_dltensor" and calls the tensor's deleter when
it is done; a capsule dropped unconsumed calls the deleter from its destructor.
"""
import ctypes
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_int, c_int32, c_int64,
                    c_uint8, c_uint16, c_uint32, c_uint64, c_void_p, py_object)

KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_CUDA_MANAGED = 13

_NAME = b"dltensor"
_USED = b"used_dltensor"


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLManagedTensor(Structure):
    pass


_Deleter = CFUNCTYPE(None, POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p),
                            ("deleter", _Deleter)]

_api = ctypes.pythonapi
_New = _api.PyCapsule_New
_New.restype = py_object
_New.argtypes = [c_void_p, c_char_p, c_void_p]
_IsValid = _api.PyCapsule_IsValid
_IsValid.restype = c_int
_IsValid.argtypes = [c_void_p, c_char_p]
_GetPointer = _api.PyCapsule_GetPointer
_GetPointer.restype = c_void_p
_GetPointer.argtypes = [py_object, c_char_p]
_SetName = _api.PyCapsule_SetName
_SetName.restype = c_int
_SetName.argtypes = [py_object, c_char_p]
_RawGetPointer = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(("PyCapsule_GetPointer", _api))


def _destroy(capsule, _valid=_IsValid, _get=_RawGetPointer, _cast=ctypes.cast,
             _ptr=POINTER(DLManagedTensor)):
    # Default arguments, not globals: this may run while the interpreter shuts down and
    # the module's globals are already gone.
    if not _valid(capsule, _NAME):
        return                   # consumed: the consumer owns the deleter call now
    m = _cast(_get(capsule, _NAME), _ptr)
    if m and m.contents.deleter:
        m.contents.deleter(m)


try:
    from ._capsule import new as _c_new
except ImportError:
    _c_new = None

if _c_new is None:
    # Without the C extension (the package used from the source tree, never built), the
    # destructor is a ctypes callback. It is correct except for a capsule freed while an
    # exception is pending (a consumer that refused it): then that exception turns into a
    # SystemError. The C destructor has no such case.
    _DESTRUCTOR = CFUNCTYPE(None, c_void_p)(_destroy)
    # The capsule keeps only the C function pointer: leak one reference to the thunk so
    # it outlives every capsule, the module and interpreter shutdown included.
    _api.Py_IncRef.argtypes = [py_object]
    _api.Py_IncRef(_DESTRUCTOR)
    _DESTRUCTOR_ADDR = ctypes.cast(_DESTRUCTOR, c_void_p).value


def set_device(managed: int, device_type: int, device_id: int) -> None:
    """Sets the device of a DLManagedTensor* of tfs_to_dlpack not yet in a capsule."""
    d = ctypes.cast(managed, POINTER(DLManagedTensor)).contents.dl_tensor.device
    d.device_type = device_type
    d.device_id = device_id


def capsule(managed: int) -> object:
    """A "dltensor" capsule owning managed (a DLManagedTensor* from tfs_to_dlpack)."""
    if _c_new is not None:
        return _c_new(managed)
    return _New(managed, _NAME, _DESTRUCTOR_ADDR)


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    pass


_DeleterV = CFUNCTYPE(None, POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p),
                                     ("deleter", _DeleterV), ("flags", c_uint64),
                                     ("dl_tensor", DLTensor)]
_NAME_V = b"dltensor_versioned"
_USED_V = b"used_dltensor_versioned"


class Borrowed:
    """A framework's tensor taken through its capsule (DLPack 1.x "dltensor_versioned" or
    the older "dltensor"): .tensor (DLTensor), and release() (the deleter call the
    consumer owes, idempotent)."""

    def __init__(self, cap: object):
        if _IsValid(id(cap), _NAME_V):
            m = ctypes.cast(_GetPointer(cap, _NAME_V), POINTER(DLManagedTensorVersioned))
            if m.contents.version.major != 1:
                # Not consumed: the capsule's own destructor frees it.
                raise BufferError("DLPack %d.%d capsule: only 1.x is understood"
                                  % (m.contents.version.major, m.contents.version.minor))
            used = _USED_V
        elif _IsValid(id(cap), _NAME):
            m = ctypes.cast(_GetPointer(cap, _NAME), POINTER(DLManagedTensor))
            used = _USED
        else:
            raise TypeError("__dlpack__() did not return an unconsumed DLPack capsule")
        if _SetName(cap, used):
            raise RuntimeError("PyCapsule_SetName failed")
        self._m = m
        self.tensor = m.contents.dl_tensor

    def release(self) -> None:
        m, self._m = self._m, None
        if m and m.contents.deleter:
            m.contents.deleter(m)

    def __enter__(self) -> "Borrowed":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def borrow(array: object) -> Borrowed:
    """array's tensor through __dlpack__, asking for a DLPack 1.x capsule first (it can
    say read-only, so numpy exports read-only arrays that way)."""
    try:
        cap = array.__dlpack__(max_version=(1, 0))
    except TypeError:            # a producer older than DLPack 1.0's keyword
        cap = array.__dlpack__()
    return Borrowed(cap)
