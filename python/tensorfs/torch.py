"""tensorfs.torch: a directory of tensors as a PyTorch state dict, without a copy.

    import tensorfs.torch as tt
    sd = tt.state_dict("/mnt/tensors/llama")       # views of the tensors' memory
    tt.publish_state_dict(model.state_dict(), "/mnt/tensors/mine")
    tt.load_into(model, "/mnt/tensors/llama")      # a copy into the model's own memory

torch is imported on the first call, so that `import tensorfs` never needs it.

Keys are the tensors' names under the directory, a subdirectory's name joined to its
entries' with "." (the layout `tensorctl load` makes of a safetensors file: flat files
named by their keys, or subdirectories where a key held "/"). The small files a model
directory keeps beside its weights as u8 tensors (config.json, tokenizer.model, chat
templates...) and names starting with "." are not tensors of the state dict.
"""
import errno
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from . import _dlpack
from . import tensor as _tensor
from .errors import make_error
from .files import rm as _rm

# Names that are the files of a model directory, not weights.
SMALL_FILE_SUFFIXES = (".json", ".txt", ".model", ".jinja", ".md")

_FP8 = ("float8_e4m3fn", "float8_e5m2")


def is_small_file(name: str) -> bool:
    """Whether a file name is one of a model directory's small files (config.json,
    tokenizer.model, merges.txt, chat_template.jinja...) or hidden, not a weight."""
    return name.startswith(".") or name.endswith(SMALL_FILE_SUFFIXES)


def tensor_files(path: Any) -> List[Tuple[str, str]]:
    """(key, file path) of every tensor under the directory path, sorted by key: keys are
    the names relative to path with "/" turned into "."; small files are left out
    (is_small_file). Raises tensorfs.Error (ENOENT, ENOTDIR...) and ValueError when two
    names give one key ("a.b" beside the directory "a" holding "b")."""
    root = _tensor._fspath(path)
    if not os.path.isdir(root):
        e = errno.ENOENT if not os.path.exists(root) else errno.ENOTDIR
        raise make_error(e, "%s: %s" % (root, os.strerror(e)), root)
    out: Dict[str, str] = {}

    def walk(d: str, prefix: str) -> None:
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as e:
            raise make_error(e.errno or errno.EIO, "%s: %s" % (d, e.strerror), d) from None
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                if not e.name.startswith("."):
                    walk(e.path, prefix + e.name + ".")
            elif not is_small_file(e.name):
                key = prefix + e.name
                if key in out:
                    raise ValueError("%s and %s both give the key %r" % (out[key], e.path, key))
                out[key] = e.path
    walk(root, "")
    return sorted(out.items())


def _torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError("tensorfs.torch needs PyTorch (%s)" % e) from None
    return torch


class _Keep:
    """What a view made without DLPack holds: the Tensor (its file and mapping)."""

    def __init__(self, t: "_tensor.Tensor", typestr: str, shape: Tuple[int, ...]):
        self.t = t
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": typestr, "data": (t.data_ptr, False),
            "version": 2, "strides": None}


def view(t: "_tensor.Tensor") -> Any:
    """A torch tensor viewing the memory of the tensorfs Tensor t (no copy), holding a
    reference to it while it lives (closing t is fine, except for an fp8 tensor that has
    no path: the view holds that Tensor, which must stay open). Every dtype but fp8 goes
    through DLPack. The library exports fp8 with DLPack 1.1's codes, but a torch that
    predates them refuses those, so fp8 is viewed as uint8 (through
    __cuda_array_interface__ on a GPU, the buffer protocol on the host) and reinterpreted
    with .view(dtype), which every torch that has the dtype accepts."""
    torch = _torch()
    dt = getattr(torch, t.dtype, None)
    if t.nbytes == 0 and isinstance(dt, torch.dtype):
        # Nothing to share; and torch (1.13 at least) drops a zero-size DLPack tensor
        # without calling its deleter, which would keep the tensor open for good.
        return torch.empty(t.shape, dtype=dt, device=t.device)
    if t.dtype not in _FP8:
        # Host memory as kDLCPU: torch takes no kDLCUDAHost (pinned memory), and finds it
        # pinned by itself (is_pinned asks the driver).
        return torch.from_dlpack(t.__dlpack__(dl_device=(_dlpack.KDL_CPU, 0))
                                 if t.on_host else t)
    if dt is None:
        raise TypeError("this torch (%s) has no %s" % (torch.__version__, t.dtype))
    # The view needs a reference of its own, as a DLPack export has: closing t releases
    # t's. A second open of the path is one (a duplicated descriptor, the same mapping);
    # a Tensor without a path (queue, open_meta) is held as it is, and must stay open.
    if t.path is not None:
        t = _tensor.open(t.path, "r+" if t.writable else "r")
    if t.on_host:
        import ctypes

        class _Buf(ctypes.c_uint8 * t.nbytes):
            pass
        buf = _Buf.from_address(t.data_ptr)
        buf.keep = t                  # torch.frombuffer holds buf, buf holds t
        u8 = torch.frombuffer(buf, dtype=torch.uint8).view(t.shape)
    else:
        with torch.cuda.device(t.device_index):
            u8 = torch.as_tensor(_Keep(t, "|u1", t.shape), device=t.device)
    return u8.view(dt)


def state_dict(path: Any, device: Any = None, mode: str = "r",
               threads: int = 1) -> Dict[str, Any]:
    """{key: torch.Tensor} of every tensor under the directory path (keys as
    tensor_files gives them), each a view of the tensor's memory (no copy) that keeps the
    tensor referenced while it lives; dtypes are kept (bfloat16, float8_e4m3fn,
    float8_e5m2 included). mode "r+" opens the tensors read-write (on the host backend a
    view of a tensor opened "r" is read-only memory: writing through it kills the
    process). device: None (where the tensors are) or a torch device; a tensor elsewhere
    is copied there (then it is a copy, not a view). threads > 1 opens that many tensors
    at once (the library's calls release the GIL); on the H100 that gained nothing over
    one (tests/bench/RESULTS-model.md), hence the default."""
    torch = _torch()
    dev = None if device is None else torch.device(device)
    files = list(tensor_files(path))
    opened: List[Any] = [None] * len(files)

    def one(i: int) -> None:
        opened[i] = _tensor.open(files[i][1], mode)

    out: Dict[str, Any] = {}
    try:
        n = max(1, min(int(threads), len(files)))
        if n == 1:
            for i in range(len(files)):
                one(i)
        else:
            with ThreadPoolExecutor(n) as ex:
                for f in [ex.submit(one, i) for i in range(len(files))]:
                    f.result()
        for i, (key, _) in enumerate(files):
            x = view(opened[i])
            if dev is not None and x.device != dev:
                x = x.to(dev)
            out[key] = x
    finally:
        for t in opened:
            if t is not None:
                t.close()
    return out


def _file_name(root: str, key: str) -> str:
    if not isinstance(key, str) or not key or "\0" in key:
        raise ValueError("state dict key %r is not a file name" % (key,))
    parts = key.split("/")
    if any(p in ("", ".", "..") for p in parts) or is_small_file(parts[-1]):
        raise ValueError("state dict key %r is not a tensor name (empty, '.', '..', or a "
                         "small file's name)" % key)
    return os.path.join(root, *parts)


def publish_state_dict(sd: Dict[str, Any], path: Any, device: Optional[int] = None,
                       threads: int = 8) -> None:
    """Copies every torch tensor of sd into a new tensor path/key (a key's "/" makes a
    subdirectory, as a safetensors load does), dtype and shape kept, created and copied
    in parallel on threads threads. A CUDA tensor is copied device to device, onto its
    own GPU unless device (a GPU ordinal) says otherwise; a CPU one onto the mount's
    default device. path is made when it does not exist; a key whose file exists raises
    FileExistsError. On failure the tensors this call made are removed."""
    torch = _torch()
    root = _tensor._fspath(path)
    items = [(k, v, _file_name(root, k)) for k, v in sd.items()]
    for k, v, _ in items:
        if not isinstance(v, torch.Tensor):
            raise TypeError("state dict entry %r is a %s, not a torch.Tensor"
                            % (k, type(v).__name__))
    os.makedirs(root, exist_ok=True)
    for _, _, p in items:
        os.makedirs(os.path.dirname(p), exist_ok=True)
    made: List[str] = []
    cuda_devices = set()

    def one(item):
        k, v, p = item
        dev = device
        if dev is None and v.is_cuda:
            dev = v.device.index
        t = _tensor.create(p, str(v.dtype), tuple(v.shape), dev)
        made.append(p)
        with t:
            if t.nbytes:
                dst = view(t)
                with torch.no_grad():
                    dst.copy_(v.detach())
                if dst.is_cuda:
                    cuda_devices.add(dst.device.index)
                    torch.cuda.current_stream(dst.device).synchronize()
                del dst

    try:
        with ThreadPoolExecutor(max(1, min(int(threads), len(items) or 1))) as ex:
            for f in [ex.submit(one, it) for it in items]:
                f.result()
    except BaseException:
        for p in made:
            _rm(p, missing_ok=True)
        raise
    for d in cuda_devices:
        torch.cuda.synchronize(d)


class LoadResult(NamedTuple):
    missing_keys: List[str]
    unexpected_keys: List[str]


def load_into(module: Any, path: Any, strict: bool = True) -> LoadResult:
    """Copies the tensors under path into module's parameters and buffers, already
    allocated (param.data.copy_(view): device to device for a GPU module), keys as
    module.state_dict() names them. A key missing from path whose parameter is the same
    tensor as one loaded (tied weights, which save_pretrained writes once) counts as
    loaded. strict: a missing or unexpected key raises RuntimeError before anything is
    copied, as load_state_dict does; a shape that differs always does. Returns
    (missing_keys, unexpected_keys)."""
    torch = _torch()
    files = dict(tensor_files(path))
    targets = module.state_dict(keep_vars=True)
    loaded_ids = {id(v) for k, v in targets.items() if k in files}
    missing = [k for k, v in targets.items() if k not in files and id(v) not in loaded_ids]
    unexpected = [k for k in files if k not in targets]
    if strict and (missing or unexpected):
        raise RuntimeError("Error(s) in loading state_dict for %s from %s: missing keys %s, "
                           "unexpected keys %s"
                           % (type(module).__name__, path, missing, unexpected))
    sd = state_dict(path)
    try:
        bad = ["%s: %s in %s, %s in the module" % (k, tuple(sd[k].shape), path, tuple(v.shape))
               for k, v in targets.items() if k in sd and tuple(sd[k].shape) != tuple(v.shape)]
        if bad:
            raise RuntimeError("size mismatch: " + "; ".join(bad))
        devices = set()
        with torch.no_grad():
            for k, v in targets.items():
                if k in sd:
                    v.data.copy_(sd[k])
                    if v.is_cuda:
                        devices.add(v.device.index)
                    if sd[k].is_cuda:
                        devices.add(sd[k].device.index)
        for d in devices:
            torch.cuda.synchronize(d)
    finally:
        sd.clear()
    return LoadResult(missing, unexpected)


__all__ = ["state_dict", "publish_state_dict", "load_into", "view", "tensor_files",
           "is_small_file", "SMALL_FILE_SUFFIXES", "LoadResult"]
