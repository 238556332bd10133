"""A Hugging Face model directory into tensorfs, once, whoever comes first.

load_model_dir(src, dest): every shard of src (named by model.safetensors.index.json, or
every *.safetensors) into the one directory dest, a tensor per key, and the small files
(config.json, tokenizer files, the index) beside them as u8 tensors holding their bytes.
It is the library's directory load (tfs_load, what `tensorctl load DIR DEST` runs).

ensure_loaded(src, dest): load_model_dir under an exclusive flock(2) on a lock file named
for dest, so that of processes racing to be first one loads and the others wait for it,
then see dest complete. flock is dropped by the kernel when its holder dies: a loader
killed half-way (tfs_load then leaves nothing) does not block the next one.
"""
import fcntl
import hashlib
import os
import tempfile

from . import files as _files

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


def load_model_dir(src: str, dest: str) -> None:
    """Loads the model directory (or safetensors file) src into dest, which must not
    exist: tensorfs.load, the library's tfs_load. On failure dest is not left behind."""
    _files.load(src, dest)


def ensure_loaded(src: str, dest: str) -> bool:
    """Loads src into dest unless dest exists, under dest's lock; True when this call
    loaded it."""
    with Lock(dest):
        if os.path.exists(dest):
            return False
        load_model_dir(src, dest)
        return True
