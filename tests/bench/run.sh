#!/usr/bin/env bash
# The tensorfs mount beside tmpfs, in one run: sequential read/write of one tensor with
# 1 MiB requests (1 and 8 streams; direct I/O, the default, and --page-cache), the
# create -> shape -> unlink rate, and lifecycle-queue round trips beside bare Redis ones.
# Prints a markdown table. Needs root (mounts). Usage: tests/bench/run.sh [BUILD]
# BENCH_BYTES (default 1 GiB), BENCH_CYCLES (default 5000), BENCH_QUEUE (default 20000),
# BENCH_BACKEND (default: the daemon's choice).
set -eu
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
BIN=$BUILD/bench/tfsbench
BYTES=${BENCH_BYTES:-$((1 << 30))}
CYCLES=${BENCH_CYCLES:-5000}
QN=${BENCH_QUEUE:-20000}
T=$(mktemp -d /tmp/tfs-bench.XXXXXX)
SOCK=$T/redis.sock
pids=()
cleanup() {
	for m in "$T/direct" "$T/cached"; do fusermount3 -u "$m" 2>/dev/null || true; done
	umount "$T/tmpfs" 2>/dev/null || true
	redis-cli -s "$SOCK" shutdown nosave >/dev/null 2>&1 || true
	wait 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

redis-server --port 0 --unixsocket "$SOCK" --save "" --appendonly no --dir "$T" \
	--daemonize no >/dev/null 2>&1 &
for _ in $(seq 100); do redis-cli -s "$SOCK" ping >/dev/null 2>&1 && break; sleep 0.05; done
mount_one() {   # DIR OPTS...
	local d=$1; shift
	mkdir -p "$d"
	"$BUILD/tensorfs" -f --redis "unix://$SOCK" --log "$d.log" ${BENCH_BACKEND:+--backend $BENCH_BACKEND} "$@" "$d" &
	for _ in $(seq 100); do mountpoint -q "$d" && return 0; sleep 0.05; done
	echo "mount of $d failed"; cat "$d.log"; exit 1
}
mount_one "$T/direct" --node bench1
mount_one "$T/cached" --node bench2 --prefix tfsbench2 --queue bench2_queue --page-cache
mkdir -p "$T/tmpfs"
mount -t tmpfs -o size=$((BYTES * 2)) tmpfs "$T/tmpfs"

val() { "$BIN" "$@" | awk '{print $2}'; }
declare -A R
for where in direct cached tmpfs; do
	for s in 1 8; do
		f=$T/$where/big$s
		R[$where.w$s]=$(val io "$f" "$BYTES" $s write)
		R[$where.r$s]=$(val io "$f" "$BYTES" $s read)
		rm -f "$f"
	done
done
cycle_t=$(val cycle "$T/direct" "$CYCLES" tensor)
cycle_p=$(val cycle "$T/tmpfs" "$CYCLES" plain)
q1=$("$BIN" queue "$SOCK" "$QN" 1 tensor)
q8=$("$BIN" queue "$SOCK" "$QN" 8 tensor)
e1=$("$BIN" queue "$SOCK" "$QN" 1 echo)
e8=$("$BIN" queue "$SOCK" "$QN" 8 echo)
qfmt() { echo "$1" | awk '{printf "%s/s (p50 %s µs, p99 %s µs)", $2, $5, $8}'; }

backend=$(grep -o "backend [a-z]*," "$T/direct.log" | head -1 | tr -d , | awk '{print $2}')
echo "tensorfs bench: $(date -u +%F), $(nproc) CPUs, $(uname -r), backend ${backend:-?}, $((BYTES >> 20)) MiB tensor, 1 MiB requests"
echo
echo "| operation | tensorfs (direct I/O) | tensorfs --page-cache | tmpfs |"
echo "| --- | --- | --- | --- |"
for s in 1 8; do
	echo "| seq write, $s stream(s), GB/s | ${R[direct.w$s]} | ${R[cached.w$s]} | ${R[tmpfs.w$s]} |"
	echo "| seq read, $s stream(s), GB/s | ${R[direct.r$s]} | ${R[cached.r$s]} | ${R[tmpfs.r$s]} |"
done
echo "| create→shape→unlink per s ($CYCLES; tmpfs: create→ftruncate→unlink) | $cycle_t | | $cycle_p |"
echo
echo "| queue round trips ($QN; create/get/delete/delete) | lifecycle queue | bare LPUSH+BRPOP |"
echo "| --- | --- | --- |"
echo "| 1 client | $(qfmt "$q1") | $(qfmt "$e1") |"
echo "| 8 clients | $(qfmt "$q8") | $(qfmt "$e8") |"
