#!/usr/bin/env bash
# The GPU benchmark of issue 3, in one run, side by side:
#  - the pinned cudaMemcpy ceiling (no FUSE), the host backend and the cuda backend through
#    a mount: a 1 GiB tensor, 1 MiB blocks, 1 and 8 threads ("streams"), read and write;
#  - create -> shape -> unlink per second (1, 8 and 16 threads), cuda backend;
#  - allocation efficiency: statfs used (GPU bytes reserved) / requested for 10,000 tensors
#    of log-uniform sizes 4 KiB..64 MiB.
#   tests/bench/gpu_bench.sh [BUILD]    (default build); prints a Markdown table.
# Needs root (FUSE), redis-server, a GPU and nvcc/cudart; BUILD/tensorfs built with CUDA.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
BUILD=$B
. tests/integration/lib.sh
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
SIZE_MiB=${SIZE_MiB:-1024}
NALLOC=${NALLOC:-10000}
NMETA=${NMETA:-20000}
BIN=$ROOT/$B/bench/gpu_bench_cuda    # make builds gpu_bench without CUDA; this one has it
mkdir -p "$ROOT/$B/bench"
have_cuda=0
if [ -e /dev/nvidiactl ] && [ -e "$CUDA_HOME/include/cuda_runtime.h" ]; then have_cuda=1; fi
if [ $have_cuda = 1 ]; then
	gcc -O2 -std=gnu11 -pthread -DWITH_CUDA -isystem "$CUDA_HOME/include" -o "$BIN" \
		tests/bench/gpu_bench.c -L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lcudart || exit 1
else
	gcc -O2 -std=gnu11 -pthread -o "$BIN" tests/bench/gpu_bench.c || exit 1
fi
start_redis || exit 1
H=$T/host
mount_tfs "$H" --node nh --backend host --prefix bh || exit 1
if [ $have_cuda = 1 ]; then
	C=$T/cuda
	mount_tfs "$C" --node nc --backend cuda --prefix bc || exit 1
fi

echo "# $(date -u +%FT%TZ) $(uname -n); $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'no GPU'); $(nproc) CPUs; fs.pipe-max-size $(cat /proc/sys/fs/pipe-max-size)"
# Whether the cuda daemon's read replies splice: since read_mem (backend.h) they are
# written from the pinned read area instead, so this reports what the pipe would allow.
[ $have_cuda = 1 ] && grep -ho "reads: [a-z ]*" "$T/cuda.log" | head -1 | sed 's/^/# cuda /'
echo
echo "| path | threads | read GB/s | write GB/s |"
echo "| --- | --- | --- | --- |"
[ $have_cuda = 1 ] && "$BIN" memcpy "$SIZE_MiB"
io_args=("host backend through the mount" "$H/big" "host backend, 8 files of 1/8 each")
[ $have_cuda = 1 ] && io_args+=("cuda backend through the mount" "$C/big" "cuda backend, 8 files of 1/8 each")
"$BIN" io "$SIZE_MiB" "${io_args[@]}"
echo
echo "| metadata and allocation | value |"
echo "| --- | --- |"
"$BIN" meta "$H" "$NMETA" 1 | sed 's/create/host: create/'
"$BIN" meta "$H" "$NMETA" 8 | sed 's/create/host: create/'
if [ $have_cuda = 1 ]; then
	rcli config resetstat >/dev/null
	"$BIN" meta "$C" "$NMETA" 1 | sed 's/create/cuda: create/'
	# what one cycle costs in Redis commands (the daemon's metadata path)
	rcli info commandstats | tr -d '\r' | awk -F'[:=,]' -v n="$NMETA" '/^cmdstat_/ {c += $3; u += $5}
		END {printf "| Redis commands per create -> shape -> unlink (1 thread) | %.1f (%.0f µs of Redis CPU) |\n", c / n, u / n}'
	"$BIN" meta "$C" "$NMETA" 8 | sed 's/create/cuda: create/'
	"$BIN" meta "$C" "$NMETA" 8 dirs | sed 's/create/cuda: create/'
	"$BIN" meta "$C" "$NMETA" 16 dirs | sed 's/create/cuda: create/'
	mkdir -p "$C/alloc"
	"$BIN" alloc "$C/alloc" "$NALLOC" | sed 's/^| /| cuda: /'
fi
cd /
finish
