# The stats attribute's size, asked first (getxattr with size 0), holds the value asked
# for right after, as every program that sizes its buffer that way expects: the counters
# move in between (the uptime, a double, prints with a varying number of digits; the
# second request counts one more request), and without room to spare about one pair in
# ten got ERANGE.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
eq "3000 pairs of size, then value: none ERANGE" "0 0" "$(python3 - "$M" <<'PY'
import ctypes, ctypes.util, os, sys
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
path, name = sys.argv[1].encode(), b"user.tensorfs.stats"
erange = other = 0
for _ in range(3000):
    n = libc.getxattr(path, name, None, 0)
    buf = ctypes.create_string_buffer(max(n, 1))
    m = libc.getxattr(path, name, buf, n)
    if m < 0:
        if ctypes.get_errno() == 34:
            erange += 1
        else:
            other += 1
    elif not buf.raw[:m].startswith(b'{"version":1'):
        other += 1
print(erange, other)
PY
)"
finish
