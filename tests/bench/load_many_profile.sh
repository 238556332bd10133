#!/usr/bin/env bash
# Where a load of many tensors spends its time (issue 38): a file of LLM layer shapes
# (FIXED_MB, default 1700: 614 tensors) beside one tensor of the same size, each loaded
# RUNS times (default 3) into a fresh directory with TFS_LOAD_PROFILE=1; prints each run's
# wall time and the last run's profile (lib/load_pipe.c's stages): with each tensor its own
# create (TFS_LOAD_MKBATCH=0) and made by batches (1); MKBATCH="1" runs only the latter.
# TFS_LOAD_PREP sets the preparing threads; MOUNT_OPTS=--debug prints the daemon's times
# of the last batches.
#   tests/bench/load_many_profile.sh [BUILD]   (GPU machine: the cuda backend by default)
set -u
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
. tests/integration/lib.sh
FIXED_MB=${FIXED_MB:-1700} python3 tests/bench/load_fixed_files.py "$T" || exit 1
python3 - "$T/one.safetensors" "${FIXED_MB:-1700}" <<'PY'
import json, os, struct, sys
n = int(sys.argv[2]) * 1000 * 1000 // 2 // 4096 * 4096
h = json.dumps({"w": {"dtype": "BF16", "shape": [n // 4096, 4096], "data_offsets": [0, n * 2]}}).encode()
h += b" " * (-len(h) % 8)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(h))); f.write(h)
    b = os.urandom(64 << 20)
    left = n * 2
    while left: k = min(left, len(b)); f.write(b[:k]); left -= k
PY
cat "$T/mid.safetensors" "$T/one.safetensors" > /dev/null
ls -la "$T"/*.safetensors
start_redis || exit 1
mount_tfs "$T/m" --node lmp ${MOUNT_OPTS:-} || exit 1
for mk in ${MKBATCH:-0 1}; do
for f in mid one; do
	for i in $(seq "${RUNS:-3}"); do
		rm -rf "$T/m/$f"
		t0=$(date +%s.%N)
		TFS_LOAD_MKBATCH=$mk TFS_LOAD_PROFILE=1 "$ROOT/$BUILD/tensorctl" load -q "$T/$f.safetensors" "$T/m/$f" 2> "$T/prof.$f.$i"
		t1=$(date +%s.%N)
		echo "$f run $i (TFS_LOAD_MKBATCH=$mk): $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.1f ms", (b-a)*1e3}')"
	done
	cat "$T/prof.$f.${RUNS:-3}"
done
done
n=$(ls "$T/m/mid" | wc -l); echo "mid: $n tensors"
# MOUNT_OPTS=--debug: the daemon's own time in the last load's batch creates
grep -o 'MKBATCH .*' "$T/m.log" | tail -8
rm -rf "$T/m/mid" "$T/m/one"
umount_tfs "$T/m"
finish > /dev/null
