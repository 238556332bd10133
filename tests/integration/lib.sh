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

# Records reach Redis through the daemon's write-behind queue (fs/store/writer.c), microseconds
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
	for _ in $(seq 400); do rcli ping >/dev/null 2>&1 && return 0; sleep 0.05; done
	echo "redis-server did not start"; return 1
}

stop_redis() {
	[ -n "$REDIS_PID" ] || return 0
	rcli shutdown nosave >/dev/null 2>&1
	wait "$REDIS_PID" 2>/dev/null
	REDIS_PID=
}

# TFS_TEST_MEMORY=vmm (tests/gpu/run.sh's GPU_MEMORY=vmm): the mounts of mount_tfs run
# --memory vmm (docs/vmm.md) unless their options name the host backend or a memory mode
# themselves; on a machine without a GPU the daemon then refuses to start. MEM_MODE: the
# last mount's memory, "vmm" or "ipc" (the host backend's counts as ipc).
MEM_MODE=ipc
# _mem_named OPTIONS...: "host" when they name the host backend, else the memory mode they
# name ("vmm", "ipc"), else nothing.
_mem_named() {
	local a prev=
	for a in "$@"; do
		case "$prev $a" in
		"--backend host"|*" --backend=host"|"-o "*backend=host*) echo host; return ;;
		"--memory vmm"|*" --memory=vmm"|"-o "*memory=vmm*) echo vmm; return ;;
		"--memory "*|*" --memory="*|"-o "*memory=*) echo ipc; return ;;
		esac
		prev=$a
	done
}

# mount_tfs DIR [options...]: foreground daemon in the background, waits for the mount
mount_tfs() {
	local dir=$1 mem=() named; shift
	mkdir -p "$dir"
	named=$(_mem_named "$@")
	MEM_MODE=${named:-${TFS_TEST_MEMORY:-ipc}}
	[ "$MEM_MODE" = host ] && MEM_MODE=ipc
	[ -z "$named" ] && [ "$MEM_MODE" = vmm ] && mem=(--memory vmm)
	"$TFS" -f --redis "$URL" --log "$T/$(basename "$dir").log" "${mem[@]}" "$@" "$dir" &
	MNT_PID[$dir]=$!
	for _ in $(seq 600); do
		mountpoint -q "$dir" && { set_backend "$dir"; [ "$BACKEND" = cuda ] || MEM_MODE=ipc; export MEM_MODE; return 0; }
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
	for _ in $(seq 400); do
		b=$(grep -o "backend [a-z][a-z]*" "$log" 2>/dev/null | head -1 | cut -d' ' -f2)
		[ -n "$b" ] && break
		sleep 0.05
	done
	export BACKEND=$b
}
export GPU_CONSUMER="$ROOT/$BUILD/gpu/consumer"   # built by tests/gpu/run.sh (make test-gpu)
export SHM_MAP_BIN="$HELPERS/shm_map"
_map_hex() { getfattr --only-values -n user.tensor.ipc_handle "$1" | od -An -v -tx1 | tr -d ' \n'; }
# cons_handle FILE: what tests/gpu/consumer takes for FILE's memory: its IPC handle as hex,
# or, for a VMM tensor (TFSVMM01), whose handle grants nothing, @ and its absolute path:
# the consumer then has the memory from the handle socket through libtensorfs.
cons_handle() {
	local h; h=$(_map_hex "$1") || return 1
	case "$h" in
	544653564d4d3031*) echo "@$(readlink -f "$1")" ;;
	*) echo "$h" ;;
	esac
}
# vmm_skip WHY: in --memory vmm (MEM_MODE) this test's checks cannot hold, for the reason
# WHY (they assert legacy IPC blocks, handles or their packing): one "skip - " line that
# says so and the test ends. A skip never counts as a pass (tests/tally.sh).
vmm_skip() {
	[ "$MEM_MODE" = vmm ] || return 0
	echo "skip - $(basename "$(dirname "$0")")/$(basename "$0" .sh): not in --memory vmm: $1"
	finish
	exit 0
}
# map_dump FILE: the tensor's bytes as another process reads them through its handle
map_dump() {
	if [ "$BACKEND" = cuda ]; then
		local h; h=$(cons_handle "$1") || return 1
		"$GPU_CONSUMER" dump "$h" "$(getfattr --only-values -n user.tensor.ipc_offset "$1")" "$(stat -c %s "$1")" 0
	else
		"$SHM_MAP_BIN" "$1" dump
	fi
}
# map_fill FILE BYTE: another process sets every byte of the tensor through its handle
map_fill() {
	if [ "$BACKEND" = cuda ]; then
		local h; h=$(cons_handle "$1") || return 1
		"$GPU_CONSUMER" fill "$h" "$(getfattr --only-values -n user.tensor.ipc_offset "$1")" "$(stat -c %s "$1")" "$2"
	else
		"$SHM_MAP_BIN" "$1" fill "$2"
	fi
}
export -f _map_hex cons_handle map_dump map_fill

# umount_tfs DIR: unmounts and checks the daemon exits 0 (ASan leak reports make it 23)
umount_tfs() {
	local dir=$1 pid=${MNT_PID[$1]} rc
	# A busy mount would leave the daemon running and wait forever: detach it lazily
	# and report it instead. A process of the test that is still exiting keeps it busy for
	# a moment: try again for up to 10 s.
	if ! fusermount3 -u "$dir" 2>/dev/null && ! unmounts_soon "$dir"; then
		nok "unmount of $(basename "$dir"): busy"
		fusermount3 -uz "$dir"
	fi
	wait "$pid"; rc=$?
	unset "MNT_PID[$dir]"
	if [ $rc -ne 0 ]; then
		nok "daemon on $(basename "$dir") exited $rc"
		tail -40 "$T/$(basename "$dir").log" | sed 's/^/      /'
	fi
	# The memory keeper starts a daemon that crashed again, so a crash would pass
	# unseen: unless the test kills daemons on purpose (EXPECT_RESTARTS=1), it fails it.
	if [ -z "${EXPECT_RESTARTS:-}" ] && grep -q "keeper: the daemon \(died\|exited\)" "$T/$(basename "$dir").log" 2>/dev/null; then
		nok "daemon on $(basename "$dir") crashed and was restarted"
		grep -B20 "keeper: the daemon" "$T/$(basename "$dir").log" | head -40 | sed 's/^/      /'
		rc=1
	fi
	return $rc
}

unmounts_soon() {
	for _ in $(seq 20); do
		sleep 0.5
		fusermount3 -u "$1" 2>/dev/null && return 0
	done
	fusermount3 -u "$1"
}

finish() {
	local d
	valgrind_verdict
	for d in "${!MNT_PID[@]}"; do umount_tfs "$d"; done
	stop_redis
	# What a test's helpers started that writes into $T (finish_hook, when defined: a
	# Sentinel group's servers rewrite their files there) stops before $T goes.
	if declare -F finish_hook >/dev/null; then finish_hook; fi
	if [ $FAILS -eq 0 ]; then rm -rf "$T"; else echo "kept $T for inspection"; fi
}
# SIGCONT after the SIGTERM: a keeper the test stopped (SIGSTOP) and did not resume ends too.
trap '[ -n "$WATCHDOG" ] && kill "$WATCHDOG" 2>/dev/null; for d in "${!MNT_PID[@]}"; do fusermount3 -uz "$d" 2>/dev/null; kill "${MNT_PID[$d]}" 2>/dev/null; kill -CONT "${MNT_PID[$d]}" 2>/dev/null; done; [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null' EXIT

# Every integration test runs under a watchdog: past TEST_TIMEOUT seconds (default 300, room
# for a loaded machine; a test that needs longer sets it before sourcing this file) it
# reports the timeout and ends the test's child processes, the daemons among them, so that
# a process stuck in a FUSE request returns (bash runs no trap while a foreground command
# runs), then the test.
_watchdog() {
	local s c
	trap - EXIT
	trap 'kill $s 2>/dev/null; exit 0' TERM
	sleep "$1" </dev/null >/dev/null 2>&1 & s=$!
	wait $s
	echo "not ok - $(basename "$(dirname "$0")")/$(basename "$0"): timed out after $1 s"
	for c in $(ps -o pid= --ppid $$); do [ "$c" = "$BASHPID" ] || kill "$c" 2>/dev/null; done
	kill -TERM $$
}
WATCHDOG=
if [[ "$0" == */integration/*/t_*.sh ]]; then
	trap 'exit 124' TERM
	_watchdog "${TEST_TIMEOUT:-300}" & WATCHDOG=$!
fi

# one_mount [options...]: the common start: a Redis, one mount at $M with OPTIONS, and
# the test's temp dir as the working directory. Exits the test when either fails.
one_mount() {
	start_redis || exit 1
	M=$T/m
	mount_tfs "$M" "$@" || exit 1
	cd "$T" || exit 1
}

# soon CMD...: CMD succeeds within 20 s, polled every 50 ms: for what follows an event the
# test cannot wait on (a close's release, a record written behind, a start-up step). The
# deadline holds on a loaded machine; a test that passes returns as soon as CMD does.
soon() { for _ in $(seq 400); do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; done; return 1; }
# before_expiry DESC SETUP WARM CHANGE SEEN: a change made behind this kernel's back
# (another node, Redis by hand) reaches it through Redis's invalidation messages before
# its caches (attributes and names: a second, TFS_ATTR_TIMEOUT and entry_timeout) would
# have let the old state go by themselves. An attempt: SETUP N, then WARM N (this kernel
# learns the old state), CHANGE N, and SEEN N polled for up to 20 s; it tells when SEEN
# held less than a second after WARM began. On a loaded machine an attempt can take longer
# than that without anything being wrong: it is made again, 10 times at most. N is the
# attempt's number (names made in SETUP carry it), BE_N the last one's.
BE_N=
before_expiry() {
	local d=$1 setup=$2 warm=$3 change=$4 seen=$5 n t0 t1 got
	for n in $(seq 10); do
		BE_N=$n
		"$setup" "$n" >/dev/null 2>&1 || { nok "$d: attempt $n: $setup failed"; return; }
		t0=${EPOCHREALTIME//[.,]/}
		"$warm" "$n" >/dev/null 2>&1 || { nok "$d: attempt $n: $warm failed"; return; }
		"$change" "$n" >/dev/null 2>&1 || { nok "$d: attempt $n: $change failed"; return; }
		got=
		for _ in $(seq 2000); do "$seen" "$n" >/dev/null 2>&1 && { got=1; break; }; sleep 0.01; done
		t1=${EPOCHREALTIME//[.,]/}
		[ -n "$got" ] || { nok "$d: not seen within 20 s"; return; }
		if [ $((t1 - t0)) -lt 1000000 ]; then ok "$d"; return; fi
		echo "    # $d: attempt $n took $(((t1 - t0) / 1000)) ms, the caches' own lifetime or more"
	done
	nok "$d: every attempt took a second or more: cannot tell an invalidation from an expiry"
}

# tier_stat MOUNT TIER FIELD: one field of the stats attribute for one tier (0 if absent)
tier_stat() {
	/usr/bin/python3 -c 'import json,sys
d={str(x["device"]):x for x in json.loads(sys.argv[1])["devices"]}
print(d[sys.argv[2]].get(sys.argv[3], 0))' "$(getfattr --only-values -n user.tensorfs.stats "$1")" "$2" "$3"
}

# check_nothing_left DIR: once everything in the mount DIR is removed, no memory, record
# or shared-memory object of its daemon is left.
check_nothing_left() {
	soon test "$(used_bytes "$1")" = 0
	soon test -z "$(rcli --scan --pattern 'tensorfs:unlinked:*')"
	eq "statfs used back to 0" 0 "$(used_bytes "$1")"
	eq "no tensor records left" "" "$(rcli --scan --pattern 'tensorfs:tensor:*')"
	eq "no unlinked records left" "" "$(rcli --scan --pattern 'tensorfs:unlinked:*')"
	# Empty blocks of packed tensors go a second or two after the last (docs/handles.md).
	soon test -z "$(ls /dev/shm | grep "^tensorfs\.${MNT_PID[$1]}\." || true)"
	eq "no shm objects left" "" "$(ls /dev/shm | grep "^tensorfs\.${MNT_PID[$1]}\." || true)"
}

# client_tools: TOOL (tests/integration/tfs_client_tool.c) and EX (the examples) for the
# client tests. With TFS_VALGRIND=1 (tests/run.sh's valgrind pass, plain build) they run
# under tests/valgrind.sh (the daemon does not: ASan checks it), each run logging to its
# own file in $VG; the checks see the programs' own output and exit status, and
# valgrind_verdict fails on any non-empty log (an error path that leaks still prints its
# error).
VG=
client_tools() {
	local p
	TOOL="$HELPERS/tfs_client_tool"
	EX="$ROOT/$BUILD/examples"
	[ "${TFS_VALGRIND:-0}" = 1 ] || return 0
	VG=$T/vg
	mkdir -p "$VG/bin"
	for p in "$TOOL" "$EX/open_by_path" "$EX/queue_lifecycle"; do
		printf '#!/bin/sh\nVG_LOG=%s exec %s %s "$@"\n' "$VG" "$ROOT/tests/valgrind.sh" "$p" \
			> "$VG/bin/${p##*/}"
		chmod +x "$VG/bin/${p##*/}"
	done
	TOOL=$VG/bin/tfs_client_tool
	EX=$VG/bin
}
# out CMD...: its stdout (and stderr), whatever the exit status
out() { "$@" 2>&1; true; }
# valgrind_verdict: under TFS_VALGRIND=1, one check over the client runs of this test.
valgrind_verdict() {
	local runs bad f
	[ -n "$VG" ] || return 0
	runs=$(find "$VG" -maxdepth 1 -name '*.log' | wc -l)
	bad=$(find "$VG" -maxdepth 1 -name '*.log' -size +0 | sort)
	if [ "$runs" -eq 0 ]; then
		echo "skip - valgrind: no client program ran"
	elif [ -z "$bad" ]; then
		ok "valgrind: $runs client runs, no memory errors, nothing definitely or indirectly lost"
	else
		nok "valgrind: $(echo "$bad" | grep -c .) of $runs client runs reported errors or leaks"
		for f in $bad; do echo "      $f:"; sed 's/^/        /' "$f" | head -40; done
	fi
}
# run_py PATH: examples/dlpack_torch.py prints its own "skip - ..." (host backend, no
# CuPy/PyTorch/GPU) or runs and must exit 0.
run_py() {
	local o rc
	command -v python3 >/dev/null || { echo "skip - dlpack_torch.py: no python3"; return; }
	o=$(python3 "$ROOT/examples/dlpack_torch.py" "$1" 2>&1); rc=$?
	case "$o" in
	"skip - "*) echo "$o" ;;
	*) if [ $rc -eq 0 ]; then ok "examples/dlpack_torch.py: $o"; else nok "examples/dlpack_torch.py: $o"; fi ;;
	esac
}

# tensorctl's failures are one message, and a non-zero exit: fails_with DESC TEXT CMD...
CTL="$ROOT/$BUILD/tensorctl"
fails_with() {
	local d=$1 e=$2 rc; shift 2
	"$@" >"$T/last.out" 2>"$T/last.err"; rc=$?
	if [ $rc -eq 0 ]; then nok "$d (succeeded, expected '$e')"; return; fi
	if grep -q -- "$e" "$T/last.err" && [ "$(wc -l < "$T/last.err")" -le 2 ] && grep -q '^tensorctl: ' "$T/last.err"; then
		ok "$d"
	else
		nok "$d (rc $rc, expected one message with '$e')"; sed 's/^/      /' "$T/last.err" | head -5
	fi
}
# gone PATH DESC: a failed command left nothing at PATH
gone() { if [ -e "$1" ]; then nok "$2: $1 left behind"; else ok "$2: nothing left behind"; fi; }

# f32_23 PATH: makes the tensor PATH, f32 [2,3] (24 bytes of zeros)
f32_23() {
	touch "$1"
	setfattr -n user.tensor.dtype -v f32 "$1"
	setfattr -n user.tensor.shape -v '[2,3]' "$1"
}
# make_t23: the tensor $M/t, f32 [2,3], and unchanged DESC, a check that its record is
# still what it was then (a refused change must leave nothing behind).
make_t23() {
	f32_23 "$M/t"
	T23=$(rcli hgetall tensorfs:tensor:t | md5sum)
}
unchanged() { eq "$1 changes nothing" "$T23" "$(rcli hgetall tensorfs:tensor:t | md5sum)"; }
# not CMD...: CMD fails (for check: "check 'gone' not mountpoint -q DIR")
not() { ! "$@"; }

# two_nodes: a Redis and two mounts of it, $A (node n1) and $B (node n2).
two_nodes() {
	start_redis || exit 1
	A=$T/a
	B=$T/b
	mount_tfs "$A" --node n1 || exit 1
	mount_tfs "$B" --node n2 || exit 1
	cd "$T" || exit 1
}
# lookups_since LOG LINE NAME: LOOKUPs of /NAME in a --debug log after line LINE (the
# daemon logs each one it serves; libfuse's own lines do not name the path).
lookups_since() { tail -n +"$(($2 + 1))" "$1" | grep -c ": LOOKUP /$3\$"; }

# NOBODY CMD...: CMD as uid/gid 65534 with no groups, for tests that start with
# other_uid_mount: one_mount with --allow-other, and the temp dir open to that uid.
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
other_uid_mount() {
	one_mount --allow-other "$@"
	chmod 755 "$T"
}
# shm_of FILE: the host backend's shared-memory object behind FILE's handle, in /dev/shm
shm_of() {
	local shm
	shm=$(getfattr --absolute-names --only-values -n user.tensor.ipc_handle "$1" | tail -c +9 | tr -d '\0')
	echo "/dev/shm/${shm#/}"
}

# send JSON: qsend (the daemon pops every 0.5 s at the most).
send() { qsend "$1"; }
# jfield JSON KEY: one field of a JSON reply (PARSE_ERROR when it is no JSON)
jfield() { /usr/bin/python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get(sys.argv[2]))" "$1" "$2" 2>/dev/null || echo PARSE_ERROR; }

# redis_password PASSWORD: the test's Redis asks for PASSWORD from now on, and rcli and
# URL give it.
redis_password() {
	redis-cli -s "$SOCK" config set requirepass "$1" >/dev/null
	URL="unix://:$1@$SOCK"
	RPASS=$1
	rcli() { tfs_flush; redis-cli -s "$SOCK" -a "$RPASS" --no-auth-warning "$@"; }
}

# client_mount: the client tests' start: client_tools, and one mount on the host backend
# (the handles the library maps are shared memory) with 64 MiB, node n1, which the
# library's queue commands name (TFS_NODE).
client_mount() {
	client_tools
	export TFS_NODE=n1
	one_mount --node n1 --backend host --max-bytes 64M
}

# ctl_mounts: the tensorctl tests' start: a Redis, $M (node n1) and $M2 (a 1 MiB mount on
# another prefix), the temp dir as working directory, and the input files of
# tensorctl/make_files.py in it.
ctl_mounts() {
	one_mount --node n1
	M2=$T/small
	mount_tfs "$M2" --node n1 --prefix small --max-bytes 1M || exit 1
	check "test files made (python3 stdlib)" /usr/bin/python3 "$ROOT/tests/integration/tensorctl/make_files.py" "$T"
	[ $FAILS -eq 0 ] || exit 1
}
# ctl_two: the tensorctl listing tests' tensors: $M/a (f32 [2,3,4], 96 bytes), $M/sc (a
# bf16 scalar, 2 bytes) and the directory $M/d.
ctl_two() {
	"$CTL" create "$M/a" --dtype f32 --shape 2,3,4
	"$CTL" create "$M/sc" --dtype bfloat16 --shape '[]' --device 0
	mkdir "$M/d"
}

# qsend JSON [TIMEOUT]: pushes a lifecycle command with an id ("r<n>") and a reply key
# ("tq:reply:<n>") added, and prints the reply popped from that key (nothing after TIMEOUT
# seconds, default 20: a reply comes at once, but a loaded machine may take seconds).
QN=0
qsend() {
	QN=$((QN + 1))
	local json=${1/\}/,\"id\":\"r$QN\",\"reply\":\"tq:reply:$QN\"\}}
	rcli lpush tensor_lifecycle "$json" >/dev/null
	rcli brpop "tq:reply:$QN" "${2:-20}" | tail -n 1
}

# stat helpers
size_of() { stat -c %s "$1"; }
xget() { getfattr --only-values -n "user.tensor.$2" "$1" 2>/dev/null; }
used_bytes() { stat -f -c '%b %f %S' "$1" | awk '{print ($1-$2)*$3}'; }

# daemon_pid DIR: the pid of the process that serves DIR. MNT_PID is its memory keeper
# (fs/mem/keeper/keeper.h), which starts it and starts it again after a crash.
daemon_pid() { pgrep -P "${MNT_PID[$1]}" -x tensorfs | head -1; }
# serves_within S DIR: waits up to S seconds until DIR answers a stat again
serves_within() {
	local n=$(( $1 * 20 ))
	for _ in $(seq "$n"); do stat "$2/." >/dev/null 2>&1 && mountpoint -q "$2" && return 0; sleep 0.05; done
	return 1
}
# kill9_and_serve DIR: kill -9 of DIR's daemon, then waits up to 30 s for a new daemon that
# serves DIR (a new pid, and its mount answering stat -f: between the detach of the dead
# mount and the new mount, the bare directory answers stat -f too). 0; 1 when none came
# (at once when the keeper is gone); 2 when there was no daemon to kill. The keeper's
# back-off (fs/mem/keeper/keeper.h) makes the wait longer after each crash in a row.
kill9_and_serve() {
	local d d2
	d=$(daemon_pid "$1")
	[ -n "$d" ] || return 2
	kill -9 "$d"
	for _ in $(seq 3000); do
		d2=$(daemon_pid "$1")
		[ -n "$d2" ] && [ "$d2" != "$d" ] && mountpoint -q "$1" && stat -f "$1" >/dev/null 2>&1 && return 0
		kill -0 "${MNT_PID[$1]}" 2>/dev/null || return 1     # the keeper is gone
		sleep 0.01
	done
	return 1
}
# stop_with SIG PID DIR: sends SIG to PID, the daemon serving DIR, and waits up to 20 s for
# it to exit; one still running is reported, detached and killed. STOP_RC: its exit status.
stop_with() {
	kill -"$1" "$2"
	for _ in $(seq 400); do kill -0 "$2" 2>/dev/null || break; sleep 0.05; done
	if kill -0 "$2" 2>/dev/null; then
		nok "SIG$1: daemon still running"
		fusermount3 -uz "$3"; kill -9 "$2"
	fi
	wait "$2"; STOP_RC=$?
}
# make_empty DIR N: creates DIR/t0 .. DIR/t<N-1>, empty tensors, in one process (fast).
make_empty() {
	/usr/bin/python3 -c 'import os, sys
for i in range(int(sys.argv[2])): os.close(os.open("%s/t%d" % (sys.argv[1], i), os.O_CREAT | os.O_WRONLY))' \
		"$1" "$2"
}
# churn DIR W UNIT SPAN: load for the crash tests, until $T/stop exists: writer W writes
# DIR/wW.N, UNIT * (N % SPAN + 1) random bytes, and removes the one it wrote three before.
churn() {
	local n=0
	while [ ! -e "$T/stop" ]; do
		n=$((n + 1))
		{ head -c $(($3 * (n % $4 + 1))) /dev/urandom > "$1/w$2.$n"
		  rm -f "$1/w$2.$((n - 3))"; } 2>/dev/null
	done
}
# mount_private DIR: a host-backend mount with its own private redis-server (no --redis);
# sets rpid and rsock to that server's pid and socket.
mount_private() {
	local line
	mkdir -p "$1"
	"$TFS" -f --log "$T/$(basename "$1").log" --backend host "$1" &
	MNT_PID[$1]=$!
	for _ in $(seq 100); do mountpoint -q "$1" && break; sleep 0.05; done
	check "mounted with a private redis-server" mountpoint -q "$1"
	line=$(grep -o "private redis-server (pid [0-9]*) at [^ ]*" "$T/$(basename "$1").log" | head -1)
	rpid=$(echo "$line" | sed 's/.*pid \([0-9]*\).*/\1/')
	rsock=${line##* at }
}

# enable_uring Y|N: sets the kernel's FUSE-over-io_uring switch for this test and puts the
# old value back on every way out (it is global). Where it cannot be set (not root, a
# kernel before 6.14) the test reports itself skipped and exits.
URING_SWITCH=/sys/module/fuse/parameters/enable_uring
restore_uring() { echo "$URING_PREV" > "$URING_SWITCH"; }
enable_uring() {
	if [ ! -w "$URING_SWITCH" ]; then
		echo "skip - io_uring: $URING_SWITCH is not writable (needs root and Linux 6.14+)"
		exit 0
	fi
	URING_PREV=$(cat "$URING_SWITCH")
	eval "$(trap -p EXIT | sed "s/^trap -- '/trap -- 'restore_uring; /")"
	echo "$1" > "$URING_SWITCH"
}
