"""dtype names: the library's enum, numpy/torch spellings, DLPack codes.

Names given back are numpy's and torch's ("float32", "bfloat16", "float8_e4m3fn"); names
taken are those, tensorfs' short names ("f32", "bf16", "f8e4m3"), and objects whose str()
or .name is one of them (numpy dtypes and scalar types, torch dtypes, jax dtypes).
"""
from typing import Any, Dict, Tuple

# Index = enum tfs_dtype (lib/tensorfs.h): (numpy/torch name, tensorfs name, item size)
_TABLE: Tuple[Tuple[str, str, int], ...] = (
    ("bool", "bool", 1),
    ("uint8", "u8", 1),
    ("int8", "i8", 1),
    ("uint16", "u16", 2),
    ("int16", "i16", 2),
    ("uint32", "u32", 4),
    ("int32", "i32", 4),
    ("uint64", "u64", 8),
    ("int64", "i64", 8),
    ("float16", "f16", 2),
    ("bfloat16", "bf16", 2),
    ("float32", "f32", 4),
    ("float64", "f64", 8),
    ("float8_e4m3fn", "f8e4m3", 1),
    ("float8_e5m2", "f8e5m2", 1),
)

NAMES: Tuple[str, ...] = tuple(t[0] for t in _TABLE)
_CODE: Dict[str, int] = {}
for _i, (_np, _short, _) in enumerate(_TABLE):
    _CODE[_np] = _i
    _CODE[_short] = _i
for _alias, _name in (("bool_", "bool"), ("half", "float16"), ("float", "float32"),
                      ("double", "float64"), ("f8_e4m3", "float8_e4m3fn"),
                      ("f8_e5m2", "float8_e5m2"), ("uint", "uint32"), ("short", "int16"),
                      ("long", "int64"), ("byte", "int8"), ("ubyte", "uint8")):
    _CODE[_alias] = _CODE[_name]

# DLPack (code, bits) -> enum. Codes: 0 int, 1 uint, 2 float, 4 bfloat, 6 bool; DLPack 1.1
# names the fp8 formats 10 (e4m3fn) and 12 (e5m2).
_FROM_DLPACK: Dict[Tuple[int, int], int] = {
    (6, 8): 0, (1, 8): 1, (0, 8): 2, (1, 16): 3, (0, 16): 4, (1, 32): 5, (0, 32): 6,
    (1, 64): 7, (0, 64): 8, (2, 16): 9, (4, 16): 10, (2, 32): 11, (2, 64): 12,
    (10, 8): 13, (12, 8): 14,
}


def code(dtype: Any) -> int:
    """The enum tfs_dtype of dtype (a name, numpy/torch/jax dtype); ValueError if none."""
    if isinstance(dtype, str):
        key = dtype
    else:
        key = getattr(dtype, "name", None)
        if not isinstance(key, str):
            key = getattr(dtype, "__name__", None) or str(dtype)
    key = key.strip()
    if key.startswith("torch."):
        key = key[len("torch."):]
    try:
        return _CODE[key]
    except KeyError:
        raise ValueError("unknown dtype %r (one of: %s)" % (dtype, ", ".join(NAMES))) from None


def name(c: int) -> str:
    """The numpy/torch name of enum value c."""
    return _TABLE[c][0] if 0 <= c < len(_TABLE) else "?"


def short_name(c: int) -> str:
    """tensorfs' own name of enum value c (what user.tensor.dtype holds)."""
    return _TABLE[c][1]


def itemsize(c: int) -> int:
    return _TABLE[c][2]


def from_dlpack(type_code: int, bits: int, lanes: int) -> int:
    """The enum of a DLPack data type; ValueError when tensorfs has no such dtype."""
    c = _FROM_DLPACK.get((type_code, bits))
    if c is None or lanes != 1:
        raise ValueError("DLPack dtype (code %d, %d bits, %d lanes) has no tensorfs dtype"
                         % (type_code, bits, lanes))
    return c


def from_short(s: str) -> str:
    """numpy/torch name of a tensorfs dtype name as metadata spells it ("f32")."""
    c = _CODE.get(s)
    return name(c) if c is not None else s
