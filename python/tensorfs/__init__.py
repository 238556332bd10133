"""tensorfs: tensors in GPU memory (or host shared memory) shared between processes by
name, as files of a tensorfs mount.

    import numpy, tensorfs
    tensorfs.publish("/mnt/tensors/w", numpy.arange(6, dtype="float32").reshape(2, 3))
    with tensorfs.open("/mnt/tensors/w") as t:
        a = numpy.from_dlpack(t)          # torch/cupy/jax .from_dlpack(t) on a GPU mount

A thin layer over libtensorfs (ctypes): see lib/tensorfs.h for the semantics of each
call. Errors are tensorfs.Error, an OSError with the errno and the library's message.
"""
from .client import Client, connect, mount_node
from .dtypes import NAMES as DTYPES
from .errors import Error
from .files import copy, info, load, ls, move, release_buffers, rm, save
from .tensor import Tensor, create, open, open_meta, publish

__version__ = "0.1.0"
__all__ = ["Tensor", "Client", "Error", "DTYPES", "open", "open_meta", "create", "publish", "load", "save", "copy",
           "release_buffers", "ls", "info", "rm", "move", "connect", "mount_node"]
