#!/usr/bin/env bash
# Small tensors by the thousand (issue 38): create -> write -> unlink of SMALL_BYTES
# (default 64 KiB) tensors with SMALL_THREADS (default 8) clients or threads, through the
# library's queue (one command per round trip, and batched), through the mount, and
# through plain files on tmpfs as the baseline. Prints one markdown table.
# Needs root (tmpfs mount). Usage: tests/bench/small_bench.sh [BUILD]
# SMALL_N (default 20000), SMALL_BATCH (default 64), SMALL_BACKEND (default host).
set -eu
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
BIN=$BUILD/bench/small_bench
N=${SMALL_N:-20000}
TH=${SMALL_THREADS:-8}
B=${SMALL_BATCH:-64}
BYTES=${SMALL_BYTES:-65536}
T=$(mktemp -d /tmp/tfs-small.XXXXXX)
SOCK=$T/redis.sock
cleanup() {
	fusermount3 -u "$T/mnt" 2>/dev/null || true
	umount "$T/tmpfs" 2>/dev/null || true
	redis-cli -s "$SOCK" shutdown nosave >/dev/null 2>&1 || true
	wait 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

redis-server --port 0 --unixsocket "$SOCK" --save "" --appendonly no --dir "$T" \
	--daemonize no >/dev/null 2>&1 &
for _ in $(seq 100); do redis-cli -s "$SOCK" ping >/dev/null 2>&1 && break; sleep 0.05; done
mkdir -p "$T/mnt" "$T/tmpfs"
"$BUILD/tensorfs" -f --redis "unix://$SOCK" --log "$T/mnt.log" --node small1 \
	--backend "${SMALL_BACKEND:-host}" ${SMALL_OPTS:-} "$T/mnt" &
for _ in $(seq 200); do mountpoint -q "$T/mnt" && break; sleep 0.05; done
mountpoint -q "$T/mnt" || { echo "mount failed"; cat "$T/mnt.log"; exit 1; }
mount -t tmpfs -o size=1g tmpfs "$T/tmpfs"

val() { "$BIN" "$@" | awk '{print $2}'; }
export SMALL_NODE=small1
lib0=$(val lib "unix://$SOCK" "$N" "$TH" 0 "$BYTES")
lib1=$(val lib "unix://$SOCK" "$N" "$TH" 1 "$BYTES")
libb=$(val lib "unix://$SOCK" "$N" "$TH" "$B" "$BYTES")
mnt=$(val files "$T/mnt" "$N" "$TH" "$BYTES")
tmp=$(val files "$T/tmpfs" "$N" "$TH" "$BYTES")

echo "small_bench: $(date -u '+%F %H:%M') UTC, $(nproc) CPUs, commit $(git rev-parse --short HEAD 2>/dev/null || echo -),"
echo "$N tensors of $BYTES bytes, $TH clients/threads, backend ${SMALL_BACKEND:-host}"
echo
echo "| create -> write -> unlink, tensors per s | tensorfs | baseline: tmpfs files |"
echo "| --- | --- | --- |"
echo "| library, queue, before: tfs_create, tfs_get, tfs_delete x 2 (5 commands) | $lib0 | |"
echo "| library, queue, 1 per round trip (tfs_create_many n=1) | $lib1 | |"
echo "| library, queue, $B per round trip (tfs_create_many / tfs_unlink_many) | $libb | |"
echo "| mount: open(O_CREAT) -> pwrite -> close -> unlink | $mnt | $tmp |"
