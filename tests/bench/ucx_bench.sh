#!/bin/bash
# Replication between two nodes on this machine (tensorctl cp -r of another node's
# directory, over UCX) against ucx_perftest's UCP active-message bandwidth on the same
# transport and a plain TCP stream (socat), in one run. Results: tests/bench/RESULTS-ucx.md.
#   tests/bench/ucx_bench.sh [SIZE_MB] [TENSORS]     (default 2048 MB in 16 tensors)
# UCX_TLS / UCX_NET_DEVICES as given (default tcp on lo). BUILD=build by default;
# PERF_OUT=FILE: perf record of both daemons during copy PERF_RUN (default 1, the one that
# also faults in the owner's mapping; 2 or 3 show the steady state).
# TFS_OPTS: more options of both daemons ("-o net_staged": the staged path, to compare with
# zero copy in one build). CHUNK: ucx_perftest's message size (default the daemons'
# request, TFS_NET_CHUNK). TFS_BACKEND=cuda for tensors in GPU memory (default host); DEV_A / DEV_B: --devices of
# node a and node b (a 2-GPU machine: DEV_A=0 DEV_B=1, one GPU per node).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
SIZE_MB=${1:-2048}
N=${2:-16}
export UCX_TLS=${UCX_TLS:-tcp} UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo} UCX_WARN_UNUSED_ENV_VARS=n
TFS=$ROOT/$BUILD/tensorfs CTL=$ROOT/$BUILD/tensorctl
T=$(mktemp -d /tmp/tfs-ucxbench.XXXXXX)
SOCK=$T/redis.sock
PIDS=()
cleanup() {
	for d in "$T/a" "$T/b"; do fusermount3 -u "$d" 2>/dev/null; done
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
now() { date +%s.%N; }
# CPU seconds (user + system) a daemon has used, its keeper's child included: a measure
# that a loaded machine's other work does not inflate, unlike wall time.
cpu() {
	local f=("/proc/$1/stat")
	for c in $(ps -o pid= --ppid "$1"); do f+=("/proc/$c/stat"); done
	cat "${f[@]}" 2>/dev/null | awk -v hz="$(getconf CLK_TCK)" '{ s += $14 + $15 } END { printf "%.2f", s / hz }'
}
rate() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.2f", b / s / 1e9 }'; }

redis-server --port 0 --unixsocket "$SOCK" --save "" --appendonly no --dir "$T" >/dev/null &
PIDS+=($!)
for _ in $(seq 100); do redis-cli -s "$SOCK" ping >/dev/null 2>&1 && break; sleep 0.05; done
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$T/key"; chmod 600 "$T/key"
for n in a b; do
	mkdir -p "$T/$n"
	devs=DEV_${n^^}
	"$TFS" ${!devs:+--devices "${!devs}"} -f --redis "unix://$SOCK" --log "$T/$n.log" --node "n$n" --cluster-key "$T/key" \
		--backend "${TFS_BACKEND:-host}" ${TFS_OPTS:-} "$T/$n" &
	PIDS+=($!)
	eval "PID_$n=$!"
done
for n in a b; do
	for _ in $(seq 400); do mountpoint -q "$T/$n" && break; sleep 0.05; done
	mountpoint -q "$T/$n" || { echo "mount of $n failed"; cat "$T/$n.log"; exit 1; }
done
# Both addresses published (a loaded machine may take seconds).
for n in na nb; do
	for _ in $(seq 1200); do [ -n "$(redis-cli -s "$SOCK" get tensorfs:ucx:$n)" ] && break; sleep 0.05; done
done

per=$((SIZE_MB / N))
bytes=$((per * N * 1024 * 1024))
echo "# $SIZE_MB MB in $N tensors of $per MiB; UCX_TLS=$UCX_TLS UCX_NET_DEVICES=$UCX_NET_DEVICES; $(nproc) CPUs${TFS_OPTS:+; $TFS_OPTS}"
head -c $((per * 1024 * 1024)) /dev/urandom > "$T/blob"
mkdir "$T/a/model"
for i in $(seq 0 $((N - 1))); do cp "$T/blob" "$T/a/model/w$i"; done
rm -f "$T/blob"

# 1. tensorctl cp -r from the other node, best of 3 (each into a fresh directory)
best=
for r in 1 2 3; do
	ca=$(cpu "$PID_a") cb=$(cpu "$PID_b")
	if [ -n "${PERF_OUT:-}" ] && [ "$r" = "${PERF_RUN:-1}" ]; then
		# A profile of both daemons (keepers' children) during one copy.
		perf record -F 999 -g -o "$PERF_OUT" -p "$(ps -o pid= --ppid "$PID_a" --ppid "$PID_b" | tr -s ' \n' ',' | sed 's/^,//; s/,$//')" >/dev/null 2>&1 &
		perfpid=$!
		sleep 1
	fi
	t0=$(now)
	"$CTL" cp -r -q "$T/b/model" "$T/b/r$r" ||
		{ echo "cp failed; the daemons' logs:"; tail -n 20 "$T/a.log" "$T/b.log"; exit 1; }
	t1=$(now)
	[ -n "${perfpid:-}" ] && { kill -INT "$perfpid"; wait "$perfpid"; perfpid=; }
	s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
	g=$(rate "$bytes" "$s")
	echo "tensorctl cp -r run $r: $s s, $g GB/s; CPU s per GB: owner $(awk -v a="$ca" -v b="$(cpu "$PID_a")" -v n="$bytes" 'BEGIN { printf "%.2f", (b - a) / (n / 1e9) }'), puller $(awk -v a="$cb" -v b="$(cpu "$PID_b")" -v n="$bytes" 'BEGIN { printf "%.2f", (b - a) / (n / 1e9) }')"
	# Every byte of the copy against the source, outside the timing: a fast copy of the
	# wrong bytes is no result.
	for i in $(seq 0 $((N - 1))); do
		cmp "$T/a/model/w$i" "$T/b/r$r/w$i" >/dev/null ||
			{ echo "cp run $r: w$i differs from the source"; exit 1; }
	done
	best=$(awk -v a="${best:-0}" -v b="$g" 'BEGIN { print (b > a) ? b : a }')
	rm -rf "$T/b/r$r"
done

# 2. ucx_perftest, UCP active messages of CHUNK bytes (the daemons' request), one flow
CHUNK=${CHUNK:-$(($(sed -n 's/^#define TFS_NET_CHUNK//p' "$ROOT/fs/net/net.h" | tr -d 'u()')))}
ptg=
if ! command -v ucx_perftest >/dev/null; then
	echo "ucx_perftest: not installed (package ucx-utils): no reference figure"
else
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
		echo "ucx_perftest: no Final line (the run failed): no reference figure"
	else
		ptg=$(echo "$pt" | awk '{ printf "%.2f", $7 * 1048576 / 1e9 }')
		echo "ucx_perftest ucp_am_bw $CHUNK B: $ptg GB/s ($pt)"
	fi
fi

# 3. a plain TCP stream over the loopback (socat), the same bytes, counted at the far end
tcp=
if ! command -v socat >/dev/null; then
	echo "socat: not installed: no TCP stream figure"
else
	port2=$((20000 + RANDOM % 20000))
	# Bounded: a sender that never connects must not leave the listener waiting for ever.
	timeout 600 socat -u TCP-LISTEN:"$port2",bind=127.0.0.1,reuseaddr - | wc -c > "$T/tcp.count" &
	sp=$!
	sleep 0.5
	t0=$(now)
	head -c "$bytes" /dev/zero | timeout 600 socat -u - TCP:127.0.0.1:"$port2"
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
echo
echo "| path | GB/s | of ucx_perftest |"
echo "| --- | --- | --- |"
pct() { if [ -n "$1" ] && [ -n "$ptg" ]; then awk -v a="$1" -v b="$ptg" 'BEGIN { printf "%.0f%%", 100 * a / b }'; else echo "-"; fi; }
echo "| tensorctl cp -r (best of 3) | $best | $(pct "$best") |"
echo "| ucx_perftest ucp_am_bw $CHUNK B | ${ptg:-not measured} | ${ptg:+100%} |"
echo "| socat TCP stream | ${tcp:-not measured} | $(pct "$tcp") |"
