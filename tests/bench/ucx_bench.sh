#!/bin/bash
# Replication between two nodes on this machine (tensorctl cp -r of another node's
# directory, over UCX) against ucx_perftest's UCP active-message bandwidth on the same
# transport and a plain TCP stream (socat), in one run that prints one table. Results:
# tests/bench/RESULTS-ucx.md.
#   tests/bench/ucx_bench.sh [SIZE_MB] [TENSORS]     (default 2048 MB in 16 tensors)
# Unattended: every wait is bounded, a configuration that fails (a daemon that does not
# start, a copy that fails or differs) is a row that says so, and the others still run.
#
# Configurations (each: two fresh daemons, the source made on node a, three copies by node
# b, each verified byte for byte; then two pulls into the last copy, whose memory is no
# longer fresh, by build/bench/pull_bench):
#   host                     host backend, tensors of their own, zero copy
#   host --preallocate 0:P   host backend, tensors carved from a pool (P: PREALLOC_MB,
#                            default 2 x SIZE_MB, at most SIZE_MB + 8 GiB), zero copy
#   host -o net_staged       host backend, every answer and pull staged (device memory's path)
#   cuda, cuda -o net_staged where nvidia-smi lists a GPU (DEV_A / DEV_B: --devices of node
#                            a and b, e.g. DEV_A=0 DEV_B=1 on a 2-GPU machine)
# CONFIGS="BACKEND OPTS;BACKEND OPTS;..." names others; TFS_BACKEND and/or TFS_OPTS given
# (as before): that one configuration alone.
# NET_THREADS="1 4" (the default): each configuration is run once per value, side by side,
# with -o net_threads=V on both daemons; NET_THREADS= (empty): the daemons' own default.
# UCX_TLS / UCX_NET_DEVICES as given (default tcp on lo). BUILD=build by default.
# PERF_OUT=FILE: perf record of both daemons during copy PERF_RUN (default 1, the one that
# also faults in the owner's mapping; 2 or 3 show the steady state; "warm": the first pull
# into the existing copy) of the first configuration. CHUNK: ucx_perftest's message size
# (default the daemons' request, TFS_NET_CHUNK).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
SIZE_MB=${1:-2048}
N=${2:-16}
export UCX_TLS=${UCX_TLS:-tcp} UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo} UCX_WARN_UNUSED_ENV_VARS=n
TFS=$ROOT/$BUILD/tensorfs CTL=$ROOT/$BUILD/tensorctl PULL=$ROOT/$BUILD/bench/pull_bench
FRESH=$ROOT/$BUILD/bench/fresh_write
for b in "$TFS" "$CTL" "$PULL" "$FRESH"; do
	[ -x "$b" ] || { echo "ucx_bench: $b missing: make -j all first"; exit 1; }
done
T=$(mktemp -d /tmp/tfs-ucxbench.XXXXXX)
PIDS=()
stop_all() {
	for d in "$T"/c*/a "$T"/c*/b; do
		mountpoint -q "$d" 2>/dev/null && fusermount3 -u "$d" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
	done
	PIDS=()
}
cleanup() {
	stop_all
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
now() { date +%s.%N; }
# CPU seconds (user + system) a daemon has used, its keeper's child included: a measure
# that a loaded machine's other work does not inflate, unlike wall time.
cpu() {
	local f=("/proc/$1/stat")
	for c in $(ps -o pid= --ppid "$1"); do f+=("/proc/$c/stat"); done
	cat "${f[@]}" 2>/dev/null | awk -v hz="$(getconf CLK_TCK)" '{ s += $14 + $15 } END { printf "%.2f", s / hz }'
}
# perf_start PID_A PID_B: a profile of both daemons (their keepers' children) until
# perf_stop, when PERF_OUT is set.
perfpid=
perf_start() {
	[ -n "${PERF_OUT:-}" ] || return 0
	perf record -F 999 -g -o "$PERF_OUT" -p "$(ps -o pid= --ppid "$1" --ppid "$2" | tr -s ' \n' ',' | sed 's/^,//; s/,$//')" >/dev/null 2>&1 &
	perfpid=$!
	sleep 1
}
perf_stop() {
	[ -n "$perfpid" ] || return 0
	kill -INT "$perfpid"
	wait "$perfpid"
	perfpid=
}
rate() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.2f", b / s / 1e9 }'; }
per_gb() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.2f", (b - a) / (n / 1e9) }'; }
maxof() { awk -v a="${1:-0}" -v b="$2" 'BEGIN { print (b > a) ? b : a }'; }

per=$((SIZE_MB / N))
bytes=$((per * N * 1024 * 1024))
[ "$per" -gt 0 ] || { echo "ucx_bench: $SIZE_MB MB in $N tensors: less than 1 MiB each"; exit 2; }
PREALLOC_MB=${PREALLOC_MB:-$((SIZE_MB * 2 < SIZE_MB + 8192 ? SIZE_MB * 2 : SIZE_MB + 8192))}
if [ -n "${TFS_BACKEND:-}${TFS_OPTS:-}" ]; then
	CONFIGS="${TFS_BACKEND:-host} ${TFS_OPTS:-}"
elif [ -z "${CONFIGS:-}" ]; then
	CONFIGS="host;host --preallocate 0:${PREALLOC_MB}M;host -o net_staged"
	if nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
		CONFIGS="$CONFIGS;cuda;cuda -o net_staged"
	fi
fi
NET_THREADS=${NET_THREADS-1 4}
echo "# $SIZE_MB MB in $N tensors of $per MiB; net_threads: ${NET_THREADS:-the default}; UCX_TLS=$UCX_TLS UCX_NET_DEVICES=$UCX_NET_DEVICES; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
head -c $((per * 1024 * 1024)) /dev/urandom > "$T/blob"
ROWS=()
PTG=

# run_config INDEX BACKEND [OPTS...]: one configuration's rows, into ROWS.
run_config() {
	local idx=$1 backend=$2 C=$T/c$1 sock r n s g best= runs= ca cb own pul warm= wruns=
	shift 2
	local name="$backend${*:+ $*}"
	mkdir -p "$C"
	sock=$C/redis.sock
	redis-server --port 0 --unixsocket "$sock" --save "" --appendonly no --dir "$C" >/dev/null &
	PIDS+=($!)
	for _ in $(seq 200); do redis-cli -s "$sock" ping >/dev/null 2>&1 && break; sleep 0.05; done
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$C/key"; chmod 600 "$C/key"
	for n in a b; do
		local devs=DEV_${n^^}
		mkdir -p "$C/$n"
		"$TFS" ${!devs:+--devices "${!devs}"} -f --redis "unix://$sock" --log "$C/$n.log" --node "n$n" \
			--cluster-key "$C/key" --backend "$backend" "$@" "$C/$n" &
		PIDS+=($!)
		eval "local PID_$n=$!"
	done
	for n in a b; do
		local pid=PID_$n
		for _ in $(seq 1200); do
			mountpoint -q "$C/$n" && break
			kill -0 "${!pid}" 2>/dev/null || break
			sleep 0.05
		done
		if ! mountpoint -q "$C/$n"; then
			echo "[$name] the mount of node $n failed; its log:"; tail -n 5 "$C/$n.log"
			ROWS+=("| $name: tensorctl cp -r | not measured: a daemon did not start | - | - |")
			stop_all; return
		fi
	done
	for n in na nb; do
		for _ in $(seq 1200); do [ -n "$(redis-cli -s "$sock" get tensorfs:ucx:$n)" ] && break; sleep 0.05; done
	done
	mkdir "$C/a/model"
	for i in $(seq 0 $((N - 1))); do cp "$T/blob" "$C/a/model/w$i"; done
	for r in 1 2 3; do
		ca=$(cpu "$PID_a") cb=$(cpu "$PID_b")
		[ "$idx" = 1 ] && [ "$r" = "${PERF_RUN:-1}" ] && perf_start "$PID_a" "$PID_b"
		s=$(now)
		timeout 1800 "$CTL" cp -r -q "$C/b/model" "$C/b/r$r"
		n=$?
		g=$(awk -v a="$s" -v b="$(now)" 'BEGIN { print b - a }')
		perf_stop
		if [ "$n" != 0 ]; then
			echo "[$name] cp run $r failed (rc $n); the daemons' logs:"; tail -n 5 "$C/a.log" "$C/b.log"
			best="failed"; break
		fi
		own=$(per_gb "$ca" "$(cpu "$PID_a")" "$bytes") pul=$(per_gb "$cb" "$(cpu "$PID_b")" "$bytes")
		g=$(rate "$bytes" "$g")
		echo "[$name] tensorctl cp -r run $r: $g GB/s; CPU s per GB: owner $own, puller $pul"
		# Every byte of the copy against the source, outside the timing: a fast copy of
		# the wrong bytes is no result.
		for i in $(seq 0 $((N - 1))); do
			cmp "$C/a/model/w$i" "$C/b/r$r/w$i" >/dev/null ||
				{ echo "[$name] cp run $r: w$i differs from the source"; best="wrong bytes"; break 2; }
		done
		best=$(maxof "$best" "$g") runs="$runs${runs:+, }$g"
		[ "$r" = 3 ] || rm -rf "$C/b/r$r"
	done
	if [ -d "$C/b/r3" ] && [[ "$best" != [fw]* ]]; then
		# The same bytes pulled into r3 again: its memory is not fresh any more.
		for r in 1 2; do
			ca=$(cpu "$PID_a") cb=$(cpu "$PID_b")
			[ "$idx" = 1 ] && [ "$r" = 1 ] && [ "${PERF_RUN:-1}" = warm ] && perf_start "$PID_a" "$PID_b"
			out=$(cd "$C/b" && timeout 1800 "$PULL" "$C/b" "$C/b/model" "$C/b/r3" $(cd "$C/a/model" && ls))
			n=$?
			perf_stop
			[ "$n" = 0 ] || { echo "[$name] pull into the existing copy failed"; warm=failed; break; }
			g=$(rate ${out% *} ${out#* })
			echo "[$name] pull into the existing copy, run $r: $g GB/s; CPU s per GB: owner $(per_gb "$ca" "$(cpu "$PID_a")" "$bytes"), puller $(per_gb "$cb" "$(cpu "$PID_b")" "$bytes")"
			warm=$(maxof "$warm" "$g") wruns="$wruns${wruns:+, }$g"
		done
		for i in $(seq 0 $((N - 1))); do
			cmp "$C/a/model/w$i" "$C/b/r3/w$i" >/dev/null ||
				{ echo "[$name] pull: w$i differs from the source"; warm="wrong bytes"; break; }
		done
	fi
	ROWS+=("| $name: tensorctl cp -r | ${best:-failed}${runs:+ ($runs)} | %${best} | ${own:--}, ${pul:--} |")
	[ -n "$warm" ] && ROWS+=("| $name: pull into the existing copy | $warm${wruns:+ ($wruns)} | %${warm} | - |")
	stop_all
}

# ucx_perftest, UCP active messages of CHUNK bytes (the daemons' request), one flow; run
# before the copies and after them, the better of the two the reference (a loaded machine
# moves it more than the copies).
CHUNK=${CHUNK:-$(($(sed -n 's/^#define TFS_NET_CHUNK//p' "$ROOT/fs/net/net.h" | tr -d 'u()')))}
perftest() {
	local port pt sp g
	command -v ucx_perftest >/dev/null || return 0
	port=$((20000 + RANDOM % 20000))
	timeout 600 ucx_perftest -p "$port" >/dev/null 2>&1 &
	sp=$!
	sleep 1
	pt=$(timeout 600 ucx_perftest 127.0.0.1 -p "$port" -t ucp_am_bw -s "$CHUNK" -n $((bytes / CHUNK)) -w 64 2>&1 |
		awk '/Final:/ { print $0 }')
	wait "$sp" 2>/dev/null
	# The "Final:" line: iterations, three latencies, the bandwidth (MB/s) of the last
	# interval and of the whole run (column 7), message rates.
	if [ -z "$pt" ]; then
		echo "ucx_perftest $1: no Final line (the run failed)"
		return 0
	fi
	g=$(echo "$pt" | awk '{ printf "%.2f", $7 * 1048576 / 1e9 }')
	echo "ucx_perftest ucp_am_bw $CHUNK B, $1: $g GB/s ($pt)"
	PTG=$(maxof "$PTG" "$g") PTRUNS="$PTRUNS${PTRUNS:+, }$g"
}
command -v ucx_perftest >/dev/null ||
	echo "ucx_perftest: not installed (package ucx-utils): no reference figure"
PTRUNS=
perftest "before the copies"
i=0
IFS=';' read -r -a cfgs <<< "$CONFIGS"
for c in "${cfgs[@]}"; do
	for t in ${NET_THREADS:-""}; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		run_config "$i" $c ${t:+-o net_threads=$t}
	done
done
rm -f "$T/blob"
perftest "after the copies"
[ "$PTG" = 0 ] && PTG=

# a plain TCP stream over the loopback (socat, 1 MiB reads and writes), the same bytes,
# counted at the far end
tcp=
if ! command -v socat >/dev/null; then
	echo "socat: not installed: no TCP stream figure"
else
	port2=$((20000 + RANDOM % 20000))
	# Bounded: a sender that never connects must not leave the listener waiting for ever.
	timeout 600 socat -b 1048576 -u TCP-LISTEN:"$port2",bind=127.0.0.1,reuseaddr - | wc -c > "$T/tcp.count" &
	sp=$!
	sleep 0.5
	t0=$(now)
	head -c "$bytes" /dev/zero | timeout 600 socat -b 1048576 -u - TCP:127.0.0.1:"$port2"
	wait "$sp" 2>/dev/null
	t1=$(now)
	got=$(cat "$T/tcp.count" 2>/dev/null)
	if [ "${got:-0}" != "$bytes" ]; then
		echo "socat TCP stream: failed ($got of $bytes bytes arrived): no figure"
	else
		tcp=$(rate "$bytes" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
		echo "socat TCP stream: $tcp GB/s"
	fi
fi
fw=$("$FRESH" 256 2>/dev/null)
echo
echo "| path | GB/s: best (runs) | of ucx_perftest | CPU s per GB: owner, puller (last cp) |"
echo "| --- | --- | --- | --- |"
pct() { if [[ "$1" =~ ^[0-9.]+$ ]] && [ -n "$PTG" ]; then awk -v a="$1" -v b="$PTG" 'BEGIN { printf "%.0f%%", 100 * a / b }'; else echo "-"; fi; }
for row in "${ROWS[@]}"; do
	v=${row##*| %}
	v=${v%% |*}
	echo "${row/| %$v |/| $(pct "$v") |}"
done
echo "| ucx_perftest ucp_am_bw $CHUNK B | ${PTG:-not measured}${PTRUNS:+ ($PTRUNS)} | ${PTG:+100%} | - |"
echo "| socat TCP stream | ${tcp:-not measured} | $(pct "$tcp") | - |"
echo "| one thread's first write into fresh memory (fresh_write) | $(echo "$fw" | awk '{ print $4 }') | - | - |"
echo "| one thread's second write (the same memory) | $(echo "$fw" | awk '{ print $6 }') | - | - |"
