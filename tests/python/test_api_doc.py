"""help(tensorfs) and docs/python.md cover the whole public face: every name of
tensorfs.__all__, every public method of Tensor and Client and every public function of
tensorfs.torch and tensorfs.transformers has a docstring and is named in the API page."""
import inspect
import os
import re

import tensorfs
import tensorfs.torch
import tensorfs.transformers

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")


def _public():
    out = [("tensorfs", n, getattr(tensorfs, n)) for n in tensorfs.__all__]
    for cls in (tensorfs.Tensor, tensorfs.Client):
        out += [(cls.__name__, n, v) for n, v in vars(cls).items()
                if not n.startswith("_") and callable(v)]
    for mod in (tensorfs.torch, tensorfs.transformers):
        out += [(mod.__name__, n, v) for n, v in vars(mod).items()
                if not n.startswith("_") and inspect.isfunction(v) and
                v.__module__ == mod.__name__]
    return out


def test_public_face_found():
    names = {n for _, n, _ in _public()}
    for n in ("open", "load", "state_dict", "from_pretrained", "renew", "numpy"):
        assert n in names


def test_every_public_call_documented():
    with open(DOC) as f:
        doc = f.read()
    undocumented = ["%s.%s" % (m, n) for m, n, _ in _public()
                    if not re.search(r"\b%s\b" % re.escape(n), doc)]
    assert not undocumented, "named nowhere in docs/python.md: %s" % ", ".join(undocumented)


def test_every_public_call_has_a_docstring():
    bare = ["%s.%s" % (m, n) for m, n, v in _public()
            if callable(v) and not inspect.getdoc(v)]
    assert not bare, "no docstring: %s" % ", ".join(bare)
