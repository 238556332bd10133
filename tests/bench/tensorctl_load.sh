#!/usr/bin/env bash
# Benchmark of `tensorctl load` (issue 5): a SIZE_MB safetensors file (default 1024) loaded
# with tensorctl (its default, the library's direct path and the FUSE path, forced with
# TENSORCTL_COPY=direct|fuse),
# against `cp` of the same file into the mount and a plain read of it (cat > /dev/null),
# in one run, on a private redis-server and mount. Source file in the page cache (warmed
# by a first read). Prints a Markdown table; each figure is the best of RUNS runs.
#   usage: tests/bench/tensorctl_load.sh [BUILD]      (env: SIZE_MB=1024 RUNS=3)
set -u
BUILD=${1:-build}
. "$(dirname "$0")/../integration/lib.sh"
CTL="$ROOT/$BUILD/tensorctl"
SIZE_MB=${SIZE_MB:-1024}
RUNS=${RUNS:-3}
[ -x "$CTL" ] || { echo "no $CTL: build first (make O=$BUILD)"; exit 1; }
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node bench || exit 1
SRC=${SRC_DIR:-$T}/bench.safetensors

# 4 F32 tensors of SIZE_MB/4 MiB each; header from python3, data from /dev/urandom
python3 - "$SRC.hdr" "$SIZE_MB" <<'PY'
import json, struct, sys
q = int(sys.argv[2]) * (1 << 20) // 4
h = {"__metadata__": {"format": "pt"}}
for i in range(4):
    h["t%d" % i] = {"dtype": "F32", "shape": [q // 4], "data_offsets": [i * q, (i + 1) * q]}
j = json.dumps(h, separators=(",", ":")).encode(); j += b" " * ((8 - len(j) % 8) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(j)) + j)
PY
{ cat "$SRC.hdr"; head -c $((SIZE_MB << 20)) /dev/urandom; } > "$SRC"
BYTES=$(stat -c %s "$SRC")
cat "$SRC" > /dev/null                        # warm the page cache

now() { date +%s.%N; }
best() {   # best NAME CMD... (after each run: cleanup via $CLEAN)
	local name=$1 b= t0 t1 dt; shift
	for _ in $(seq "$RUNS"); do
		sync; t0=$(now)
		"$@" || { echo "$name failed"; exit 1; }
		t1=$(now)
		dt=$(echo "$t1 - $t0" | bc -l)
		if [ -z "$b" ] || [ "$(echo "$dt < $b" | bc -l)" = 1 ]; then b=$dt; fi
		eval "$CLEAN"
	done
	printf '| %s | %.3f | %.0f |\n' "$name" "$b" "$(echo "$BYTES / $b / 1048576" | bc -l)"
}

echo "tensorctl load benchmark: $(du -h "$SRC" | cut -f1) safetensors ($BYTES bytes), best of $RUNS"
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB RAM, $(uname -r); backend: $(grep -o 'using the [a-z]* backend' "$T/m.log" | head -1 || echo cuda)"
echo
echo "| operation | seconds | MiB/s |"
echo "| --- | ---: | ---: |"
CLEAN=:
best "plain read (cat FILE > /dev/null)" bash -c "cat '$SRC' > /dev/null"
CLEAN="rm -f '$M/cp.bin'"
best "cp FILE MOUNT/ (FUSE write path)" cp "$SRC" "$M/cp.bin"
CLEAN="rm -rf '$M/st'"
best "tensorctl load (default: auto)" "$CTL" load -q "$SRC" "$M/st"
best "tensorctl load, TENSORCTL_COPY=direct (libtensorfs direct copy)" env TENSORCTL_COPY=direct "$CTL" load -q "$SRC" "$M/st"
best "tensorctl load, TENSORCTL_COPY=fuse (FUSE file, 1 MiB pwrite)" env TENSORCTL_COPY=fuse "$CTL" load -q "$SRC" "$M/st"
CLEAN="rm -f '$M/alloc'"
best "(for reference) tensorctl create of the same bytes: allocation only, no copy" "$CTL" create "$M/alloc" --dtype f32 --shape $(( (BYTES - $(stat -c %s "$SRC.hdr")) / 4 ))
"$CTL" load -q "$SRC" "$M/st"
CLEAN="rm -f '$T/out.safetensors'"
best "tensorctl save (default: auto = direct copy)" "$CTL" save -q "$M/st" "$T/out.safetensors"
best "tensorctl save, TENSORCTL_COPY=fuse (FUSE file, 1 MiB pread)" env TENSORCTL_COPY=fuse "$CTL" save -q "$M/st" "$T/out.safetensors"
"$CTL" save -q "$M/st" "$T/out.safetensors" && cmp "$SRC" "$T/out.safetensors" && echo && echo "save output byte-identical to the source: yes"
rm -rf "$M/st" "$T/out.safetensors" "$SRC" "$SRC.hdr"
finish >/dev/null
