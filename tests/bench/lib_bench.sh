#!/usr/bin/env bash
# The libtensorfs benchmark of issue 4, in one run, side by side:
#  - open by path -> device pointer (tfs_open + tfs_tensor_data), warm and cold, p50/p99,
#    beside PyTorch's CUDA IPC share of the same tensor size (tests/bench/torch_ipc_bench.py:
#    torch.multiprocessing's rebuild of a shared CUDA tensor, and a Pipe round trip);
#  - direct copy (tfs_write / tfs_read) of a 1 GiB tensor from/to a pinned buffer beside
#    pinned cudaMemcpy to a cudaMalloc buffer of the same size, then a pageable buffer.
#   tests/bench/lib_bench.sh [BUILD]    (default build); prints Markdown tables.
# Needs root (FUSE), redis-server; for the cuda rows a GPU, cudart and PyTorch with CUDA
# (without them it measures the host backend and skips PyTorch). BUILD must hold
# libtensorfs.a and tensorfs (make O=BUILD all). SIZE_MiB, NOPEN, NCOLD, LAT_BYTES,
# PYTHON change the defaults below.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build}
BUILD=$B
. tests/integration/lib.sh
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
SIZE_MiB=${SIZE_MiB:-1024}       # the direct-copy tensor
LAT_BYTES=${LAT_BYTES:-4194304}  # the open-latency tensor (f32), the same size for PyTorch
NOPEN=${NOPEN:-10000}
NCOLD=${NCOLD:-1000}
PY=${PYTHON:-python3}
rc=0

backend=host
BIN=$ROOT/$B/bench/lib_bench
if [ -e /dev/nvidiactl ] && [ -e "$CUDA_HOME/include/cuda_runtime_api.h" ]; then
	backend=cuda
	# make builds lib_bench without CUDA (host buffers only); this one pins with cudart
	BIN=$ROOT/$B/bench/lib_bench_cuda
	mkdir -p "$ROOT/$B/bench"
	# shellcheck disable=SC2046   # pkg-config's flags are meant to split
	gcc -O2 -std=gnu11 -pthread -D_GNU_SOURCE -DWITH_CUDA -Wall -Wextra -Wstrict-prototypes \
		-Wmissing-prototypes -Werror -Ilib -isystem "$CUDA_HOME/include" -o "$BIN" \
		tests/bench/lib_bench.c "$ROOT/$B/libtensorfs.a" $(pkg-config --libs hiredis libcjson) \
		-ldl -lrt -L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lcudart || exit 1
fi
[ -x "$BIN" ] || { echo "lib_bench.sh: $BIN missing: make O=$B all first"; exit 1; }
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node nl --backend $backend --prefix bl || exit 1
touch "$M/lat" "$M/big"
setfattr -n user.tensor.dtype -v f32 "$M/lat" &&
	setfattr -n user.tensor.shape -v "[$((LAT_BYTES / 4))]" "$M/lat" &&
	setfattr -n user.tensor.shape -v "[$((SIZE_MiB * 1048576))]" "$M/big" || exit 1

"$BIN" open "$M/lat" "$NOPEN" "$NCOLD" > "$T/open.md" || rc=1
# For reading the breakdown: the daemon's open and release each make one Redis round trip.
redis-benchmark -s "$SOCK" -c 1 -n 20000 --csv -t set 2>/dev/null | awk -F, 'NR == 2 { gsub(/"/, "")
	printf "| context: one Redis SET round trip on the same socket (redis-benchmark, 1 client) | 20000 | %.1f | %.1f | %.1f |\n", $5 * 1000, $7 * 1000, $3 * 1000 }' >> "$T/open.md"
torch_note="PyTorch not measured"
if [ $backend = cuda ] && "$PY" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	"$PY" tests/bench/torch_ipc_bench.py --bytes "$LAT_BYTES" --n "$NOPEN" --cold "$NCOLD" \
		> "$T/torch.md" 2> "$T/torch.err" || { rc=1; cat "$T/torch.err"; }
	torch_note=$(grep -m1 '^torch ' "$T/torch.err")
else
	: > "$T/torch.md"
fi
"$BIN" copy "$M/big" > "$T/copy.md" || rc=1

echo "# $(date -u +%FT%TZ) $(uname -n); $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'no GPU'); $(nproc) CPUs; $backend backend; $torch_note"
echo
echo "Open by path, a $LAT_BYTES-byte f32 tensor (µs; warm = the mapping is cached in the process):"
echo
echo "| what | n | p50 µs | p99 µs | mean µs |"
echo "| --- | --- | --- | --- | --- |"
cat "$T/open.md" "$T/torch.md"
echo
ceiling="cudaMemcpy between the same caller buffer and a cudaMalloc buffer"
[ $backend = host ] && ceiling="memcpy between the same caller buffer and a malloc'd one"
echo "Direct copy of a $SIZE_MiB MiB tensor (GB/s = 10^9 B/s, median of 7 passes; ceiling: $ceiling):"
echo
echo "| what | pieces | tfs GB/s | ceiling GB/s | tfs / ceiling |"
echo "| --- | --- | --- | --- | --- |"
cat "$T/copy.md"

# field F (3 = n, 4 = p50, 5 = p99; 4..6 for the copy rows) of the first row whose label
# starts with LABEL
field() { awk -F'|' -v l="$2" -v f="$3" 'index($2, " " l) == 1 { gsub(/[ %]/, "", $f); print $f; exit }' "$1"; }
yes_no() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "not measured"; else print (a + 0 <= b + 0) ? "yes" : "no" }'; }
ptr=device; [ $backend = host ] && ptr=host
w50=$(field "$T/open.md" "tensorfs: tfs_open(path) -> $ptr pointer, warm, the tensor held" 4)
w99=$(field "$T/open.md" "tensorfs: tfs_open(path) -> $ptr pointer, warm, the tensor held" 5)
o50=$(field "$T/open.md" "tensorfs: tfs_open(path) -> $ptr pointer, warm, only the mapping" 4)
o99=$(field "$T/open.md" "tensorfs: tfs_open(path) -> $ptr pointer, warm, only the mapping" 5)
t50=$(field "$T/torch.md" "torch: rebuild_cuda_tensor -> data_ptr, warm" 4)
t99=$(field "$T/torch.md" "torch: rebuild_cuda_tensor -> data_ptr, warm" 5)
r50=$(field "$T/torch.md" "torch: Pipe round trip" 4)
m50=$(field "$T/open.md" "tensorfs: tfs_open_meta(JSON in hand) -> $ptr pointer, warm" 4)
m99=$(field "$T/open.md" "tensorfs: tfs_open_meta(JSON in hand) -> $ptr pointer, warm" 5)
kind="pinned caller buffer" cm=cudaMemcpy h2d=H2D d2h=D2H
[ $backend = host ] && kind="pageable caller buffer" cm=memcpy h2d="to shm" d2h="from shm"
wr=$(awk -F'|' -v k="$kind" 'index($2, "tfs_write") && index($2, k) && index($3, "whole") { gsub(/[ %]/, "", $6); print $6 }' "$T/copy.md")
rd=$(awk -F'|' -v k="$kind" 'index($2, "tfs_read") && index($2, k) && index($3, "whole") { gsub(/[ %]/, "", $6); print $6 }' "$T/copy.md")
echo
echo "| target | measured | met |"
echo "| --- | --- | --- |"
# Warm has two cases here: the tensor held open by the process (a second tfs_open shares
# its descriptor, no FUSE request; torch's warm rebuild likewise answers from the storage
# the process holds) and only its mapping held (each tfs_open makes one FUSE OPEN).
echo "| open by path -> $ptr pointer, warm, the tensor held open: p50 <= 50 µs | ${w50:-?} µs | $(yes_no "$w50" 50) |"
echo "| open by path -> $ptr pointer, warm, the tensor held open: p99 <= 200 µs | ${w99:-?} µs | $(yes_no "$w99" 200) |"
echo "| open by path -> $ptr pointer, warm, only the mapping held: p50 <= 50 µs | ${o50:-?} µs | $(yes_no "$o50" 50) |"
echo "| open by path -> $ptr pointer, warm, only the mapping held: p99 <= 200 µs | ${o99:-?} µs | $(yes_no "$o99" 200) |"
echo "| faster than PyTorch's rebuild of a shared tensor it holds, warm p50 / p99 (like for like: both hold it) | ${w50:-?} / ${w99:-?} µs vs ${t50:-?} / ${t99:-?} µs | p50 $(yes_no "$w50" "$t50"), p99 $(yes_no "$w99" "$t99") |"
echo "| the same with only the mapping held (one FUSE OPEN), p50 / p99 | ${o50:-?} / ${o99:-?} µs vs ${t50:-?} / ${t99:-?} µs | p50 $(yes_no "$o50" "$t50"), p99 $(yes_no "$o99" "$t99") |"
echo "| faster than PyTorch's whole share (Pipe round trip), p50, only the mapping held | ${o50:-?} µs vs ${r50:-?} µs | $(yes_no "$o50" "$r50") |"
echo "| (not a target: like for like) the library alone, tfs_open_meta, vs PyTorch's rebuild, warm p50 / p99 | ${m50:-?} / ${m99:-?} µs vs ${t50:-?} / ${t99:-?} µs | p50 $(yes_no "$m50" "$t50"), p99 $(yes_no "$m99" "$t99") |"
echo "| tfs_write >= 80% of $cm $h2d, $kind, whole tensor | ${wr:-?}% | $(yes_no 80 "$wr") |"
echo "| tfs_read >= 80% of $cm $d2h, $kind, whole tensor | ${rd:-?}% | $(yes_no 80 "$rd") |"
cd /
finish
exit $rc
