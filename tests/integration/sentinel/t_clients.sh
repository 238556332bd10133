# Through a Sentinel group whose servers and sentinels all ask for a password: tensorctl
# mounts a daemon with --redis sentinel://... and the password in a file; the C library
# (its queue client) and the Python Client connect with the sentinel:// URL and the
# password in TENSORFS_REDIS_PASSWORD; after the primary is killed and the replica
# promoted, all of them work again, and the password is in no command line or log.
TEST_TIMEOUT=600
. "$(dirname "$0")/../lib.sh"
GROUP_PASS=s3cret-sentinel
. "$(dirname "$0")/group.sh"
sentinel_group 1000 || exit 1
client_tools
PWF=$T/pw
( umask 077; echo "$GROUP_PASS" > "$PWF" )
M=$T/m
mkdir -p "$M"
check "tensorctl mount --redis sentinel://... --redis-password-file" \
	"$CTL" mount "$M" --redis "$SURL" --redis-password-file "$PWF" --node n1 --backend host \
	--log "$T/m.log"
check "the mount serves" sh -c "echo x > '$M/a' && [ \"\$(cat '$M/a')\" = x ]"
check "the record is on the primary" [ "$(rcli exists tensorfs:tensor:a)" = 1 ]
export TENSORFS_REDIS_PASSWORD=$GROUP_PASS TFS_NODE=n1
lib_round() { "$EX/queue_lifecycle" "$SURL" "$1"; }
check "the C library's queue client through sentinel://" lib_round q1
# A sanitizer build's library needs its runtime loaded first, and Python's own allocations
# are not this test's leaks.
PYENV=()
if ldd "$ROOT/$BUILD/libtensorfs.so" | grep -q libasan; then
	PYENV=(LD_PRELOAD="$(cc -print-file-name=libasan.so)" ASAN_OPTIONS=detect_leaks=0)
fi
py_round() {
	env "${PYENV[@]}" PYTHONPATH="$ROOT/python" TENSORFS_LIBRARY="$ROOT/$BUILD/libtensorfs.so" \
		/usr/bin/python3 - "$SURL" "$1" <<'PY'
import sys, tensorfs
with tensorfs.Client(sys.argv[1], node="n1") as c:
    c.create(sys.argv[2], "f32", [2, 2])
    c.delete(sys.argv[2])
print("python ok")
PY
}
check "the Python Client through sentinel://" py_round p1
for p in $(pgrep -f -- "$M"); do
	check "no password in the command line of pid $p" not grep -qF -- "$GROUP_PASS" "/proc/$p/cmdline"
done
kill -9 "$PID_P"; wait "$PID_P" 2>/dev/null
check "the sentinels promote the replica" wait_failover
check "the mount serves again after the failover" waits_for 120 sh -c "echo y > '$M/b'"
check "the first tensor reads its bytes" [ "$(cat "$M/a")" = x ]
a_on_new() { [ "$(gcli -p "$PORT_R" exists tensorfs:tensor:a)" = 1 ]; }
check "its record is on the new primary" waits_for 120 a_on_new
check "the C library after the failover" waits_for 120 lib_round q2
check "the Python Client after the failover" waits_for 120 py_round p2
check "tensorctl ls after the failover" "$CTL" ls "$M"
check "no password in the daemon's log" not grep -qF -- "$GROUP_PASS" "$T/m.log"
check "tensorctl umount" "$CTL" umount "$M"
finish
