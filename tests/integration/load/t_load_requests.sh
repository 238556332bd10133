# A load whose pieces the daemon fills (fill_ioctl.h) asks the mount per tensor only what
# it must: LOOKUP and CREATE of the name (and the kernel's GETATTR of the directory the
# create before changed), one SETXATTR of dtype and shape together ("f32 [1024]", which
# spares the GETATTR the kernel sends between two SETXATTRs), the fill, the RELEASE of the
# close; no GETATTR of the tensor, whose size only write() needs (lib/load_pipe.c,
# sized()). Counted by the daemon's "requests" (user.tensorfs.stats): 8 a tensor before.
# Through write() (TFS_LOAD_FILL=0) the size is still checked and the bytes the same.
. "$(dirname "$0")/../lib.sh"
one_mount
N=40
reqs() { jfield "$(getfattr --only-values -n user.tensorfs.stats "$M" 2>/dev/null)" requests; }
python3 - "$T/n.safetensors" "$N" <<'PY'
import json, os, struct, sys
n = int(sys.argv[2]); h = {}
for i in range(n):
    h["t%02d" % i] = {"dtype": "F32", "shape": [1024 + i], "data_offsets": [0, 0]}
off = 0
for i in range(n):
    b = 4 * (1024 + i); h["t%02d" % i]["data_offsets"] = [off, off + b]; off += b
j = json.dumps(h, separators=(",", ":")).encode(); j += b" " * ((8 - len(j) % 8) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(j)) + j + os.urandom(off))
PY
"$CTL" load -q n.safetensors "$M/warm" >/dev/null 2>&1    # the connection's first FLUSH
# each tensor 6 requests; the load's own (the directory's LOOKUP, MKDIR, SETXATTR, the
# stats' GETXATTR) about 10; one more request per tensor would add N (7N + 10 at least,
# the kernel's asides only adding). The kernel asks again for attributes a loaded machine
# let expire (up to 0.7 a tensor seen): the fewest of 3 loads, against 6.75N + 10.
n=
for i in 1 2 3; do
	r0=$(reqs)
	check "load $N tensors by fills ($i)" env TENSORCTL_COPY=fuse "$CTL" load -q n.safetensors "$M/st$i"
	r1=$(reqs)
	if [ -z "$n" ] || [ $((r1 - r0)) -lt "$n" ]; then n=$((r1 - r0)); fi
done
max=$((6 * N + 3 * N / 4 + 10))
if [ "$n" -le "$max" ]; then ok "$n requests for $N tensors (at most $max)"
else nok "$n requests for $N tensors: more than $max"; fi
check "save it back" "$CTL" save -q "$M/st1" back.safetensors
check "byte-identical" cmp n.safetensors back.safetensors
check "by write(), fills off" env TENSORCTL_COPY=fuse TFS_LOAD_FILL=0 "$CTL" load -q n.safetensors "$M/w"
check "save that back" "$CTL" save -q -f "$M/w" back.safetensors
check "byte-identical" cmp n.safetensors back.safetensors
eq "each tensor's size" "$((4 * 1024 + 4 * 39))" "$(stat -c %s "$M/w/t39")"
finish
