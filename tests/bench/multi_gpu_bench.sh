#!/usr/bin/env bash
# Issue 18's rows, in one run: a move of a tensor between GPUs (setfattr user.tensor.device,
# the daemon's peer copy) beside cudaMemcpyPeer of the same size, and 1 MiB dd read/write
# through the mount of a tensor on a device other than the default.
#   tests/bench/multi_gpu_bench.sh [BUILD]      SIZE_MiB (default 8192), ROUNDS (5),
#   MOUNT_OPTS (more options of the mount: "--preallocate 0:10G,1:10G"; TFS_TEST_MEMORY=vmm
#   mounts it in --memory vmm, as tests/integration/lib.sh does), RESIDENT_MiB (0: a
#   tensor of that size kept on each device while the one tensor moves, as a device holding
#   a model's weights would)
# Needs 2 GPUs, root, redis-server, BUILD/tensorfs built with CUDA; prints a Markdown table.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
BUILD=$B
. tests/integration/lib.sh
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
SIZE_MiB=${SIZE_MiB:-8192}
ROUNDS=${ROUNDS:-5}
ndev=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "$ndev" -lt 2 ]; then echo "multi_gpu_bench: $ndev GPU(s), needs 2"; exit 2; fi
PEER=$ROOT/$B/bench/gpu_peer
mkdir -p "$ROOT/$B/bench"
gcc -O2 -std=gnu11 -isystem "$CUDA_HOME/include" -o "$PEER" tests/bench/gpu_peer.c \
	-L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lcudart || exit 1
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node nb --backend cuda ${MOUNT_OPTS:-} || exit 1
BYTES=$((SIZE_MiB << 20))
RESIDENT_MiB=${RESIDENT_MiB:-0}
if [ "$RESIDENT_MiB" -gt 0 ]; then
	for i in 0 1; do
		mkdir "$M/r$i" && setfattr -n user.tensor.device -v $i "$M/r$i" &&
			truncate -s $((RESIDENT_MiB << 20)) "$M/r$i/w" || exit 1
	done
fi
truncate -s "$BYTES" "$M/t"
best=0; back=0
gbs() { awk -v b="$BYTES" -v t0="$1" -v t1="$2" 'BEGIN { printf "%.2f", b / (t1 - t0) / 1e9 }'; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }
for _ in $(seq "$ROUNDS"); do
	for to in 1 0; do
		t0=$(date +%s.%N)
		setfattr -n user.tensor.device -v $to "$M/t" || exit 1
		g=$(gbs "$t0" "$(date +%s.%N)")
		if [ $to = 1 ]; then best=$(max "$g" "$best"); else back=$(max "$g" "$back"); fi
	done
done
# The same moves timed around the setxattr call alone, in one process, half a second apart
# (untimed), as the commands above are apart by their spawns: the command above also
# counts the spawn of setfattr and of date, and a move sent at once after another meets
# the previous one's old memory still being given back on the zeroing thread.
sys=$(python3 - "$M/t" "$BYTES" "$ROUNDS" <<'PY'
import os, sys, time
path, size, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
best = {b"1": 0.0, b"0": 0.0}
for _ in range(rounds):
    for to in (b"1", b"0"):
        time.sleep(0.5)
        t0 = time.perf_counter()
        os.setxattr(path, "user.tensor.device", to)
        best[to] = max(best[to], size / (time.perf_counter() - t0) / 1e9)
print("%.2f %.2f" % (best[b"1"], best[b"0"]))
PY
) || exit 1
sys01=${sys% *}; sys10=${sys#* }
peer=$("$PEER" "$BYTES" "$ROUNDS") || exit 1
p01=$(echo "$peer" | awk '/^peer 0->1 GB/ {print $4}'); p10=$(echo "$peer" | awk '/^peer 1->0 GB/ {print $4}')
mkdir "$M/d1"; setfattr -n user.tensor.device -v 1 "$M/d1"
truncate -s $((1 << 30)) "$M/d1/io"
rd=$(dd if="$M/d1/io" of=/dev/null bs=1M iflag=direct 2>&1 | awk '/copied/ {print $(NF-1), $NF}')
wr=$(dd if=/dev/zero of="$M/d1/io" bs=1M count=1024 conv=notrunc oflag=direct 2>&1 | awk '/copied/ {print $(NF-1), $NF}')
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -2 | tr '\n' ' ') $SIZE_MiB MiB, best of $ROUNDS, ${TFS_TEST_MEMORY:-ipc} memory, $RESIDENT_MiB MiB resident on each device, ${MOUNT_OPTS:-no more options}"
echo "# $(echo "$peer" | grep '^peer access' | tr '\n' ';')"
echo "| what | tensorfs | cudaMemcpyPeer | ratio |"
echo "|---|---|---|---|"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "| move device 0 -> 1 (setfattr user.tensor.device), GB/s | $best | $p01 | $(ratio "$best" "$p01") |"
echo "| move device 1 -> 0, GB/s | $back | $p10 | $(ratio "$back" "$p10") |"
echo "| move device 0 -> 1, the setxattr call alone, GB/s | $sys01 | $p01 | $(ratio "$sys01" "$p01") |"
echo "| move device 1 -> 0, the setxattr call alone, GB/s | $sys10 | $p10 | $(ratio "$sys10" "$p10") |"
echo "| dd read of a 1 GiB tensor on device 1, 1 MiB blocks | $rd | | |"
echo "| dd write of a 1 GiB tensor on device 1, 1 MiB blocks | $wr | | |"
grep -a "cuda: moved" "$T/m.log" | tail -6 | sed 's/^/# /'
umount_tfs "$M"
finish > /dev/null
