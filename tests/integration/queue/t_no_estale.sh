# Issue 15 item 15: while the queue deletes and re-creates a name as fast as it can, a
# program working on that name through the mount gets only what a local filesystem gives
# (ENOENT, EEXIST, EBUSY), never ESTALE: not from open, stat or setxattr by path (the VFS
# retries those once after ESTALE, and the name can go again before the retry acts), and
# not from futimens, fstat or fgetxattr on a descriptor it holds (no retry: the node must
# serve the tensor it opened, never another one made under the name since).
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
N=${NO_ESTALE_N:-6000}
# The queue: create and delete x in turn, pipelined, as fast as the daemon serves them.
for i in $(seq "$N"); do
	echo "LPUSH tensor_lifecycle '{\"op\":\"create\",\"name\":\"x\",\"dtype\":\"u8\",\"shape\":[64],\"id\":\"c$i\",\"reply\":\"ne:reply\"}'"
	echo "LPUSH tensor_lifecycle '{\"op\":\"delete\",\"name\":\"x\",\"id\":\"d$i\",\"reply\":\"ne:reply\"}'"
done > "$T/cmds"
redis-cli -s "$SOCK" < "$T/cmds" > /dev/null &
qpid=$!
# Two threads of one process through the mount on x until the queue is done: what each
# call failed with, by name.
timeout 120 /usr/bin/python3 - "$M/x" "$qpid" > "$T/errnos" 2>&1 <<'PY'
import errno, os, sys, threading, collections
path, qpid = sys.argv[1], int(sys.argv[2])
seen = collections.Counter()
def alive():
    try:
        os.kill(qpid, 0)
        return True
    except OSError:
        return False
def call(what, f, *a):
    try:
        return f(*a)
    except OSError as e:
        seen[what + ":" + errno.errorcode.get(e.errno, str(e.errno))] += 1
def work():
    while alive():
        call("stat", os.stat, path)
        fd = call("open", os.open, path, os.O_RDWR | os.O_CREAT, 0o644)
        if fd is None:
            continue
        call("futimens", os.utime, fd)
        call("fstat", os.fstat, fd)
        call("fgetxattr", os.getxattr, fd, "user.tensor.shape")
        call("read", os.pread, fd, 64, 0)
        os.close(fd)
        call("setxattr", os.setxattr, path, "user.k", b"v")
        call("open", os.open, path, os.O_RDONLY) and None
ts = [threading.Thread(target=work) for _ in range(2)]
for t in ts: t.start()
for t in ts: t.join()
for k, v in sorted(seen.items()):
    print(k, v)
PY
wait $qpid
sed 's/^/# /' "$T/errnos"
eq "no ESTALE reached the program" "" "$(grep ESTALE "$T/errnos")"
# By path: the name may be gone, or taken by the queue between the lookup and the create.
# On the descriptor: nothing may fail.
eq "nothing but what a local filesystem gives" "" \
	"$(grep -vE '^(stat|open|setxattr):(ENOENT|EEXIST|EBUSY) ' "$T/errnos" || true)"
for _ in $(seq 200); do [ "$(rcli llen ne:reply)" = $((2 * N)) ] && break; sleep 0.1; done
eq "every queue command answered" $((2 * N)) "$(rcli llen ne:reply)"
rm -f "$M/x"
for _ in $(seq 200); do [ "$(used_bytes "$M")" = 0 ] && break; sleep 0.1; done
eq "statfs: no memory in use" 0 "$(used_bytes "$M")"
finish
