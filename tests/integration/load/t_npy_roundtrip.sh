# An .npy file (float32, 1024 x 1025: over one 8 MiB piece) loads byte-exact with its
# dtype and shape, and saves back to the same file.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
python3 - <<'PY' || exit 1
import random, struct
d = "{'descr': '<f4', 'fortran_order': False, 'shape': (1024, 1025), }"
total = (10 + len(d) + 1 + 63) // 64 * 64
h = d + " " * (total - 10 - len(d) - 1) + "\n"
open("a.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode()
                          + random.Random(3).randbytes(1024 * 1025 * 4))
PY
check "load" "$CTL" load -q a.npy "$M/a"
eq "dtype" "f32" "$(xget "$M/a" dtype)"
eq "shape" "[1024,1025]" "$(xget "$M/a" shape)"
check "the tensor's bytes are the file's data" cmp <(tail -c $((1024 * 1025 * 4)) a.npy) "$M/a"
check "save back byte-identical" bash -c "'$CTL' save -q '$M/a' b.npy && cmp a.npy b.npy"
finish
