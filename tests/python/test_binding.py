"""The ctypes binding (tensorfs/_lib.py) checked against lib/tensorfs.h, so that neither
can drift from the other: every function the header declares is bound with the same
number of arguments and compatible types, and every structure the binding mirrors has
the header's fields in the header's order at the compiler's offsets (the compiler that
builds the library tells them, through a program this test writes from the header)."""
import ctypes
import os
import re
import shutil
import subprocess

import pytest

from tensorfs import _lib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HEADER = os.path.join(ROOT, "lib", "tensorfs.h")


def _header() -> str:
    with open(HEADER) as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _prototypes():
    """{name: (return type, [parameter types])} of every function of the header."""
    text = re.sub(r"^\s*#.*$", " ", _header(), flags=re.M)   # preprocessor lines
    text = re.sub(r"\{[^{}]*\}", " ", text)                   # struct and enum bodies
    out = {}
    for stmt in text.split(";"):
        stmt = " ".join(stmt.split())
        m = re.fullmatch(r"(?:extern \"C\" )?([A-Za-z_][\w \*]*?)\s*\b(tfs_\w+)\s*\((.*)\)", stmt)
        if not m or m.group(1).startswith("typedef") or "(" in m.group(3):
            continue
        ret, name, params = m.group(1).strip(), m.group(2), m.group(3).strip()
        plist = [] if params in ("", "void") else [p.strip() for p in params.split(",")]
        # a parameter's type: the declaration less its name
        types = [re.sub(r"\w+$", "", p).strip() if re.search(r"[\s\*]\w+$", p) else p
                 for p in plist]
        out[name] = (ret, types)
    return out


_POINTERS = (ctypes.c_void_p, ctypes.c_char_p)


def _is_pointer(ct) -> bool:
    return ct in _POINTERS or (isinstance(ct, type) and issubclass(ct, ctypes._Pointer))


def _matches(ctype: str, ct) -> bool:
    """Whether the ctypes type ct can carry the C type ctype."""
    if "*" in ctype:
        return _is_pointer(ct)
    base = ctype.replace("const ", "").strip()
    want = {"int": ctypes.c_int, "tfs_dtype": ctypes.c_int, "uint64_t": ctypes.c_uint64,
            "int64_t": ctypes.c_int64, "size_t": ctypes.c_size_t}.get(base)
    if want is None and base.startswith("enum "):
        want = ctypes.c_int
    return want is not None and ctypes.sizeof(ct) == ctypes.sizeof(want) and \
        not _is_pointer(ct)


def test_header_parsed():
    protos = _prototypes()
    # a parser that found nothing would pass everything below
    for name in ("tfs_open", "tfs_load", "tfs_create", "tfs_load_release", "tfs_strerror"):
        assert name in protos, "the header's parser missed %s" % name
    assert protos["tfs_create"][1] == ["tfs_client *", "const char *", "tfs_dtype", "int",
                                      "const int64_t *", "int"]
    assert protos["tfs_errmsg"] == ("const char *", [])


def test_every_function_bound():
    missing, wrong = [], []
    for name, (ret, params) in sorted(_prototypes().items()):
        f = getattr(_lib, name, None)
        if f is None or not hasattr(f, "argtypes"):
            missing.append(name)
            continue
        argtypes = list(f.argtypes or [])
        if len(argtypes) != len(params):
            wrong.append("%s: %d arguments in the header, %d bound"
                         % (name, len(params), len(argtypes)))
            continue
        for i, (c, ct) in enumerate(zip(params, argtypes)):
            if not _matches(c, ct):
                wrong.append("%s: argument %d is %s, bound as %s" % (name, i + 1, c, ct))
        if ret == "void":
            if f.restype is not None:
                wrong.append("%s returns void, bound as %s" % (name, f.restype))
        elif not _matches(ret, f.restype):
            wrong.append("%s returns %s, bound as %s" % (name, ret, f.restype))
    assert not missing, "functions of tensorfs.h the binding lacks: %s" % ", ".join(missing)
    assert not wrong, "; ".join(wrong)


def _struct_fields(name: str):
    m = re.search(r"struct\s+%s\s*\{(.*?)\};" % name, _header(), flags=re.S)
    assert m, "struct %s is not in tensorfs.h" % name
    fields = []
    for decl in m.group(1).split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
        fields.append(fp.group(1) if fp else re.search(r"(\w+)\s*(\[[^\]]*\])?$", decl).group(1))
    return fields


STRUCTS = {"tfs_tensor_info": _lib.TensorInfo, "tfs_load_opts": _lib.LoadOpts,
           "tfs_save_opts": _lib.SaveOpts, "tfs_create_req": _lib.CreateReq,
           "tfs_copy_opts": _lib.CopyOpts}


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    """{struct: {"size": n, field: offset}} and TFS_MAX_DIMS, as the C compiler sees them."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to read the header's layout with")
    d = tmp_path_factory.mktemp("layout")
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "tensorfs.h"',
             "int main(void) {", 'printf("TFS_MAX_DIMS %d\\n", (int)TFS_MAX_DIMS);']
    for s in STRUCTS:
        lines.append('printf("%s size %%zu\\n", sizeof(struct %s));' % (s, s))
        for f in _struct_fields(s):
            lines.append('printf("%s %s %%zu\\n", offsetof(struct %s, %s));' % (s, f, s, f))
    lines += ["return 0; }"]
    src = d / "layout.c"
    src.write_text("\n".join(lines) + "\n")
    exe = d / "layout"
    subprocess.run([cc, "-I", os.path.join(ROOT, "lib"), "-o", str(exe), str(src)],
                   check=True, capture_output=True, text=True)
    out = {}
    for line in subprocess.run([str(exe)], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        parts = line.split()
        if parts[0] == "TFS_MAX_DIMS":
            out["TFS_MAX_DIMS"] = int(parts[1])
        else:
            out.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return out


def test_max_dims(layout):
    assert _lib.MAX_DIMS == layout["TFS_MAX_DIMS"]


@pytest.mark.parametrize("name", sorted(STRUCTS))
def test_struct_layout(layout, name):
    py = STRUCTS[name]
    c_fields = _struct_fields(name)
    py_fields = [f[0] for f in py._fields_]
    assert py_fields == c_fields, "struct %s: header fields %s, bound %s" % (
        name, c_fields, py_fields)
    for f in c_fields:
        assert getattr(py, f).offset == layout[name][f], "struct %s.%s: offset %d in C, %d bound" % (
            name, f, layout[name][f], getattr(py, f).offset)
    assert ctypes.sizeof(py) == layout[name]["size"], "struct %s: size" % name
