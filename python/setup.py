"""Build: tensorfs is Python over libtensorfs (ctypes) plus one small C extension,
tensorfs._capsule (the DLPack capsule destructor; needs a C compiler and Python's headers,
Debian's python3-dev).

At install time the library
is taken from $TENSORFS_LIBRARY, else from ../build/libtensorfs.so when installing from a
built source tree; its absolute path goes into tensorfs/_config.py, so that the installed
package finds it without environment variables. With neither, the package looks for the
system's libtensorfs.so.0 when imported.
"""
import os

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def library_path() -> str:
    env = os.environ.get("TENSORFS_LIBRARY")
    if env:
        return os.path.realpath(env)
    built = os.path.join(HERE, "..", "build", "libtensorfs.so")
    return os.path.realpath(built) if os.path.exists(built) else ""


class BuildPy(build_py):
    def run(self):
        super().run()
        if self.dry_run:
            return
        path = os.path.join(self.build_lib, "tensorfs", "_config.py")
        with open(path, "w") as f:
            f.write('"""Written by setup.py at install time."""\n')
            f.write("LIBRARY = %r\n" % library_path())


setup(cmdclass={"build_py": BuildPy},
      ext_modules=[Extension("tensorfs._capsule", ["tensorfs/_capsule.c"])])
