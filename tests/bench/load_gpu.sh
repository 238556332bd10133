#!/usr/bin/env bash
# Issue 38 in one run on the GPU machine (about 4-6 minutes): where a load's time goes and
# how it compares with the link and the disk.
#   - pinned H2D ceiling (torch, a 4 GiB pinned buffer to the device, whole and in 1 MiB
#     pieces), measured in this run;
#   - a BIG_GB (default 21) safetensors file of LLM-shaped bf16 tensors, warm (best of 3):
#     `tensorctl load` (the daemon filling from the page cache: the default, 16 threads),
#     with -j 8 and -j 12, 4 and 16 MiB pieces (64 by default),
#     mapped in the command's own process (TENSORCTL_COPY=direct) and mapped with the
#     file registered with CUDA (TFS_LOAD_REGISTER=1: DMA from the page cache); beside
#     safetensors.torch.load_file(device="cuda") (once);
#   - the same file cold (echo 3 > /proc/sys/vm/drop_caches before each): `tensorctl
#     load` by default (the page cache), with --direct (O_DIRECT), -j 16 both ways, and
#     mapped with --direct; beside dd iflag=direct bs=16M and buffered dd of the file;
#   - a 1.7 GB checkpoint (SMALL_GB), warm, best of 3, and the time to its first tensor;
#   - each tensorfs row's per-stage profile (TFS_LOAD_PROFILE=1) of its best pass.
# Prints a Markdown table, then the profiles. Needs root, the cuda backend, python3 with
# torch and safetensors. usage: tests/bench/load_gpu.sh [BUILD]
# (env: BIG_GB=21 SMALL_GB=1.7 PASSES=3 COLD=1; DIR: where the files go, default the
# test's temporary directory)
set -u
BUILD=${1:-build}
. "$(dirname "$0")/../integration/lib.sh"
CTL="$ROOT/$BUILD/tensorctl"
PASSES=${PASSES:-3}
BIG_GB=${BIG_GB:-21}
SMALL_GB=${SMALL_GB:-1.7}
[ -x "$CTL" ] || { echo "build first (make O=$BUILD)"; exit 1; }
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node bench || exit 1
[ "$BACKEND" = cuda ] || echo "warning: backend $BACKEND, not cuda"
D=${DIR:-$T}
BIG=$D/big.safetensors SMALL=$D/small.safetensors PROF=$T/prof
mkdir -p "$PROF"
echo "$(date -u '+%F %H:%M') UTC, commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null), $(nproc) cores, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $D on $(df --output=fstype "$D" | tail -1) ($(df --output=source "$D" | tail -1))"

# FILE GB: bf16 [4096, 8192] tensors (64 MiB each) and the rest as [4096, N]; the bytes
# are written for real (no holes: a cold read must come from the disk) and synced.
make_st() {
	python3 - "$1" "$2" <<'PY' || exit 1
import json, struct, sys, os
out, gb = sys.argv[1], float(sys.argv[2])
total = int(gb * 1e9) // (4096 * 2) * (4096 * 2)
h, off, i = {"__metadata__": {"format": "pt"}}, 0, 0
while off < total:
    cols = min(8192, (total - off) // (4096 * 2))
    n = 4096 * cols * 2
    h["model.layers.%d.mlp.w" % i] = {"dtype": "BF16", "shape": [4096, cols], "data_offsets": [off, off + n]}
    off += n; i += 1
j = json.dumps(h, separators=(",", ":")).encode(); j += b" " * ((8 - len(j) % 8) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(j)) + j)
    blk = os.urandom(1 << 24)
    left = off
    while left:
        k = min(left, len(blk)); f.write(blk[:k]); left -= k
    f.flush(); os.fsync(f.fileno())
print("made %s: %d tensors, %d bytes" % (out, i, os.path.getsize(out)), file=sys.stderr)
PY
}
make_st "$BIG" "$BIG_GB"
make_st "$SMALL" "$SMALL_GB"
BSZ=$(stat -c %s "$BIG") SSZ=$(stat -c %s "$SMALL")
now() { date +%s.%N; }
ROWS=$T/rows
: > "$ROWS"
row() { echo "| $1 | $2 | $3 | $4 |" >> "$ROWS"; }   # what, s, GB/s, of ceiling
# best NAME BYTES CMD...: best of PASSES (each loads into $M/x, removed after); the best
# pass's profile kept
# calc EXPR: floating-point arithmetic by awk (the GPU machine has no bc)
calc() { awk "BEGIN { print $1 }"; }
best() {
	local name=$1 bytes=$2 b= t0 t1 dt; shift 2
	for _ in $(seq "$PASSES"); do
		t0=$(now)
		TFS_LOAD_PROFILE=1 "$@" 2> "$PROF/cur" || { echo "$name failed:"; cat "$PROF/cur"; return 1; }
		t1=$(now)
		dt=$(calc "$t1 - $t0")
		if [ -z "$b" ] || [ "$(calc "($dt < $b) ? 1 : 0")" = 1 ]; then b=$dt; cp "$PROF/cur" "$PROF/$name"; fi
		"$CTL" rm -r "$M/x" > /dev/null
	done
	gbs=$(calc "$bytes / $b / 1000000000")
	row "$name" "$(printf %.3f "$b")" "$(printf %.2f "$gbs")" "$(printf %.0f%% "$(calc "100 * $gbs / $CEIL")")"
}
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
once() {   # once NAME BYTES CMD...: one cold pass
	local name=$1 bytes=$2 t0 t1 dt; shift 2
	drop; t0=$(now)
	TFS_LOAD_PROFILE=1 "$@" 2> "$PROF/$name" > /dev/null || { echo "$name failed:"; cat "$PROF/$name"; }
	t1=$(now); dt=$(calc "$t1 - $t0")
	row "$name" "$(printf %.3f "$dt")" "$(printf %.2f "$(calc "$bytes / $dt / 1000000000")")" "(cold)"
	"$CTL" rm -r "$M/x" > /dev/null 2>&1 || true
}

# The ceiling: pinned host memory to the device, this run, this GPU.
CEILS=$(python3 - <<'PY'
import torch, time
n = 4 << 30
x = torch.empty(n, dtype=torch.uint8).pin_memory(); y = torch.empty(n, dtype=torch.uint8, device="cuda")
s = torch.cuda.Stream()
def run(piece):
    torch.cuda.synchronize(); t0 = time.perf_counter()
    with torch.cuda.stream(s):
        for o in range(0, n, piece):
            y[o:o + piece].copy_(x[o:o + piece], non_blocking=True)
    s.synchronize(); return n / (time.perf_counter() - t0) / 1e9
run(n)
print("%.2f %.2f" % (max(run(n) for _ in range(3)), max(run(1 << 20) for _ in range(3))))
PY
)
CEIL=${CEILS%% *}
row "pinned H2D ceiling, whole 4 GiB (torch)" - "$CEIL" 100%
row "pinned H2D, 1 MiB pieces (torch)" - "${CEILS##* }" "$(printf %.0f%% "$(calc "100 * ${CEILS##* } / $CEIL")")"

cat "$BIG" "$SMALL" > /dev/null                  # warm
best "tensorctl load ${BIG_GB} GB (default: daemon fills)" "$BSZ" "$CTL" load -q "$BIG" "$M/x"
best "tensorctl load ${BIG_GB} GB -j 8" "$BSZ" "$CTL" load -q -j 8 "$BIG" "$M/x"
best "tensorctl load ${BIG_GB} GB -j 12" "$BSZ" "$CTL" load -q -j 12 "$BIG" "$M/x"
best "tensorctl load ${BIG_GB} GB, 4 MiB pieces" "$BSZ" env TFS_LOAD_CHUNK_MB=4 "$CTL" load -q "$BIG" "$M/x"
best "tensorctl load ${BIG_GB} GB, 16 MiB pieces" "$BSZ" env TFS_LOAD_CHUNK_MB=16 "$CTL" load -q "$BIG" "$M/x"
best "tensorctl load ${BIG_GB} GB mapped (TENSORCTL_COPY=direct)" "$BSZ" env TENSORCTL_COPY=direct "$CTL" load -q "$BIG" "$M/x"
best "tensorctl load ${BIG_GB} GB mapped + TFS_LOAD_REGISTER=1" "$BSZ" env TENSORCTL_COPY=direct TFS_LOAD_REGISTER=1 "$CTL" load -q "$BIG" "$M/x"
python3 - "$BIG" <<'PY' >> "$ROWS"
import sys, time, os, torch
from safetensors.torch import load_file
torch.zeros(1, device="cuda"); torch.cuda.synchronize()
t0 = time.perf_counter(); d = load_file(sys.argv[1], device="cuda"); torch.cuda.synchronize()
dt = time.perf_counter() - t0
print("| safetensors load_file(device=cuda), warm | %.3f | %.2f | |" % (dt, os.path.getsize(sys.argv[1]) / dt / 1e9))
PY
best "tensorctl load ${SMALL_GB} GB (default)" "$SSZ" "$CTL" load -q "$SMALL" "$M/x"
best "tensorctl load ${SMALL_GB} GB mapped" "$SSZ" env TENSORCTL_COPY=direct "$CTL" load -q "$SMALL" "$M/x"
if [ "${COLD:-1}" = 1 ]; then
	once "cold: dd iflag=direct bs=16M" "$BSZ" dd if="$BIG" of=/dev/null bs=16M iflag=direct status=none
	once "cold: dd bs=16M (page cache)" "$BSZ" dd if="$BIG" of=/dev/null bs=16M status=none
	once "cold: tensorctl load (default: the page cache)" "$BSZ" "$CTL" load -q "$BIG" "$M/x"
	once "cold: tensorctl load --direct" "$BSZ" "$CTL" load -q --direct "$BIG" "$M/x"
	once "cold: tensorctl load -j 16 --direct" "$BSZ" "$CTL" load -q -j 16 --direct "$BIG" "$M/x"
	once "cold: tensorctl load -j 16 (the page cache)" "$BSZ" "$CTL" load -q -j 16 "$BIG" "$M/x"
	once "cold: tensorctl load mapped --direct" "$BSZ" env TENSORCTL_COPY=direct "$CTL" load -q --direct "$BIG" "$M/x"
fi
echo
echo "| what | s | GB/s | of the whole-buffer ceiling |"
echo "| --- | --- | --- | --- |"
cat "$ROWS"
echo
for f in "$PROF"/*; do [ "$(basename "$f")" = cur ] && continue; echo "### $(basename "$f")"; grep "profile" "$f"; done
rm -f "$BIG" "$SMALL"
finish > /dev/null
