# Shared by the integration tests: a real redis-server on a unix socket in a temp dir and
# real tensorfs mounts. Each t_*.sh sources this, calls start_redis and mount_tfs, runs
# checks that print "ok - ..." or "not ok - ...", and ends with finish.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-build}
TFS="$ROOT/$BUILD/tensorfs"
HELPERS="$ROOT/$BUILD/tests"
T=$(mktemp -d /tmp/tfs-test.XXXXXX)
SOCK="$T/redis.sock"
URL="unix://$SOCK"
REDIS_PID=
declare -gA MNT_PID=()   # -g: tests/gpu/gpulib.sh sources this inside a function
FAILS=0

ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; FAILS=$((FAILS + 1)); }
# check DESC CMD...: passes when CMD exits 0
check() { local d=$1; shift; if "$@" >"$T/last.out" 2>&1; then ok "$d"; else nok "$d"; sed 's/^/      /' "$T/last.out" | head -20; fi; }
# check_fails_with DESC ERRTEXT CMD...: passes when CMD fails and prints ERRTEXT
check_err() {
	local d=$1 e=$2; shift 2
	if "$@" >"$T/last.out" 2>&1; then nok "$d (succeeded, expected '$e')"; return; fi
	if grep -q -- "$e" "$T/last.out"; then ok "$d"; else nok "$d (expected '$e')"; sed 's/^/      /' "$T/last.out" | head -5; fi
}
# eq DESC EXPECTED ACTUAL
eq() { if [ "$2" == "$3" ]; then ok "$1"; else nok "$1: expected '$2', got '$3'"; fi; }

# Records reach Redis through the daemon's write-behind queue (fs/wb.c), microseconds
# after each operation; fsync on a mount returns once they are there. A check that reads
# Redis first flushes every mount of this test, so it never races the writer.
tfs_flush() {
	awk -v t="$T/" 'index($2, t) == 1 && $3 ~ /tensorfs/ {print $2}' /proc/mounts |
		while read -r m; do sync "$m" 2>/dev/null; done
	return 0
}
rcli() { tfs_flush; redis-cli -s "$SOCK" "$@"; }
export T SOCK
export -f tfs_flush rcli

start_redis() {
	redis-server --port 0 --unixsocket "$SOCK" --save "" --appendonly no --dir "$T" \
		--logfile "$T/redis.log" --daemonize no >/dev/null 2>&1 3<&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&- &
	REDIS_PID=$!
	for _ in $(seq 100); do rcli ping >/dev/null 2>&1 && return 0; sleep 0.05; done
	echo "redis-server did not start"; return 1
}

stop_redis() {
	[ -n "$REDIS_PID" ] || return 0
	rcli shutdown nosave >/dev/null 2>&1
	wait "$REDIS_PID" 2>/dev/null
	REDIS_PID=
}

# mount_tfs DIR [options...]: foreground daemon in the background, waits for the mount
mount_tfs() {
	local dir=$1; shift
	mkdir -p "$dir"
	"$TFS" -f --redis "$URL" --log "$T/$(basename "$dir").log" "$@" "$dir" &
	MNT_PID[$dir]=$!
	for _ in $(seq 200); do
		mountpoint -q "$dir" && { set_backend "$dir"; return 0; }
		kill -0 "${MNT_PID[$dir]}" 2>/dev/null || break
		sleep 0.05
	done
	echo "mount of $dir failed:"; cat "$T/$(basename "$dir").log"; return 1
}

# BACKEND: "host" or "cuda", what the last mounted daemon runs (its log names it once the
# backend started, just after the mount appears). Tests that look at the handle's insides
# branch on it; map_dump and map_fill open the handle as another process does.
BACKEND=
set_backend() {
	local log=$T/$(basename "$1").log b=
	for _ in $(seq 100); do
		b=$(grep -o "backend [a-z][a-z]*" "$log" 2>/dev/null | head -1 | cut -d' ' -f2)
		[ -n "$b" ] && break
		sleep 0.05
	done
	export BACKEND=$b
}
export GPU_CONSUMER="$ROOT/$BUILD/gpu/consumer"   # built by tests/gpu/run.sh (make test-gpu)
export SHM_MAP_BIN="$HELPERS/shm_map"
_map_hex() { getfattr --only-values -n user.tensor.ipc_handle "$1" | od -An -v -tx1 | tr -d ' \n'; }
# map_dump FILE: the tensor's bytes as another process reads them through its handle
map_dump() {
	if [ "$BACKEND" = cuda ]; then
		local h; h=$(_map_hex "$1") || return 1
		"$GPU_CONSUMER" dump "$h" "$(getfattr --only-values -n user.tensor.ipc_offset "$1")" "$(stat -c %s "$1")" 0
	else
		"$SHM_MAP_BIN" "$1" dump
	fi
}
# map_fill FILE BYTE: another process sets every byte of the tensor through its handle
map_fill() {
	if [ "$BACKEND" = cuda ]; then
		local h; h=$(_map_hex "$1") || return 1
		"$GPU_CONSUMER" fill "$h" "$(getfattr --only-values -n user.tensor.ipc_offset "$1")" "$(stat -c %s "$1")" "$2"
	else
		"$SHM_MAP_BIN" "$1" fill "$2"
	fi
}
export -f _map_hex map_dump map_fill

# umount_tfs DIR: unmounts and checks the daemon exits 0 (ASan leak reports make it 23)
umount_tfs() {
	local dir=$1 pid=${MNT_PID[$1]} rc
	# A busy mount would leave the daemon running and wait forever: detach it lazily
	# and report it instead.
	if ! fusermount3 -u "$dir" 2>/dev/null && ! { sleep 0.5; fusermount3 -u "$dir"; }; then
		nok "unmount of $(basename "$dir"): busy"
		fusermount3 -uz "$dir"
	fi
	wait "$pid"; rc=$?
	unset "MNT_PID[$dir]"
	if [ $rc -ne 0 ]; then
		nok "daemon on $(basename "$dir") exited $rc"
		tail -40 "$T/$(basename "$dir").log" | sed 's/^/      /'
	fi
	return $rc
}

finish() {
	local d
	for d in "${!MNT_PID[@]}"; do umount_tfs "$d"; done
	stop_redis
	if [ $FAILS -eq 0 ]; then rm -rf "$T"; else echo "kept $T for inspection"; fi
}
trap 'for d in "${!MNT_PID[@]}"; do fusermount3 -uz "$d" 2>/dev/null; kill "${MNT_PID[$d]}" 2>/dev/null; done; [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null' EXIT

# qsend JSON [TIMEOUT]: pushes a lifecycle command with an id ("r<n>") and a reply key
# ("tq:reply:<n>") added, and prints the reply popped from that key (nothing after TIMEOUT
# seconds, default 3).
QN=0
qsend() {
	QN=$((QN + 1))
	local json=${1/\}/,\"id\":\"r$QN\",\"reply\":\"tq:reply:$QN\"\}}
	rcli lpush tensor_lifecycle "$json" >/dev/null
	rcli brpop "tq:reply:$QN" "${2:-3}" | tail -n 1
}

# stat helpers
size_of() { stat -c %s "$1"; }
xget() { getfattr --only-values -n "user.tensor.$2" "$1" 2>/dev/null; }
used_bytes() { stat -f -c '%b %f %S' "$1" | awk '{print ($1-$2)*$3}'; }

# daemon_pid DIR: the pid of the process that serves DIR. MNT_PID is its memory keeper
# (fs/keeper.h), which starts it and starts it again after a crash.
daemon_pid() { pgrep -P "${MNT_PID[$1]}" -x tensorfs | head -1; }
# serves_within S DIR: waits up to S seconds until DIR answers a stat again
serves_within() {
	local n=$(( $1 * 20 ))
	for _ in $(seq "$n"); do stat "$2/." >/dev/null 2>&1 && mountpoint -q "$2" && return 0; sleep 0.05; done
	return 1
}
