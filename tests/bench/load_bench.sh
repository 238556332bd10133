#!/usr/bin/env bash
# Loading model weights into tensorfs (issue 19), in one run with alternating passes, the
# source files in the page cache:
#   - a 2.17 GiB safetensors file of 53 tensors (bf16/f16/f32/i64/u8) written by
#     safetensors.torch.save_file: `tensorctl load` (the whole process; by default, under
#     4 GiB, through the FUSE files) and with TENSORCTL_COPY=direct (start, CUDA context,
#     pinned buffers, load), tfs_load inside a warm process (load_bench.c), and
#     safetensors.torch.load_file(device="cuda") inside a warm process;
#   - a 2 GiB raw file: `tensorctl load`;
#   - through the FUSE files, the daemon filling each piece from the file (the default,
#     core/fill_ioctl.h) beside the same load by write() (TFS_LOAD_FILL=0), and with 16
#     copy threads;
#   - save (the directory back to a safetensors file in the page cache): `tensorctl save`
#     (through the files, by default; -j 16; mapped, TENSORCTL_COPY=direct) and tfs_save
#     mapped in a warm process, into a shared mapping of the file (the default) and by
#     pwrite (TFS_SAVE_MMAP=0), beside safetensors.torch.save_file of the same tensors on
#     the GPU;
#   - what a cold process pays before its first load: the CUDA context, the pinned buffers;
#   - once: creating and shaping the 53 tensors without copying (allocation + the daemon's
#     zero-fill), and a sweep of copy threads x piece sizes.
# Prints every timing, then a Markdown table of medians. Needs the cuda backend, python3
# with torch and safetensors (the GPU machine).
#   - the same load into a host-backend mount (POSIX shared memory), mapped and through
#     the FUSE files;
#   - the file system's own rate for one writer (dd of the file, 8 MiB blocks), and saves
#     into /dev/shm (tmpfs), through a shared mapping and by pwrite.
#   usage: tests/bench/load_bench.sh [BUILD]      (env: PASSES=3, SWEEP=0 skips the sweep,
#   BIG_GB=N adds the load of an N GiB raw file through the files and mapped)
set -u
BUILD=${1:-build}
. "$(dirname "$0")/../integration/lib.sh"
CTL="$ROOT/$BUILD/tensorctl"
LB="$ROOT/$BUILD/bench/load_bench"
PY="$ROOT/tests/bench/load_bench.py"
PASSES=${PASSES:-3}
[ -x "$CTL" ] && [ -x "$LB" ] || { echo "build first (make O=$BUILD)"; exit 1; }
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node bench || exit 1
H=$T/h
mount_tfs "$H" --node benchhost --prefix hb --backend host || exit 1
echo "backends: cuda on $M, host on $H; $(nproc) cores; $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1); /tmp on $(df --output=fstype "$T" | tail -1)"
ST=$T/model.safetensors RAW=$T/raw.bin LOG=$T/times.txt SHM=/dev/shm/tfs-load-bench.$$
python3 "$PY" make "$ST" || exit 1
head -c $((2 << 30)) "$ST" > "$RAW"
cat "$ST" "$RAW" > /dev/null
SZ=$(stat -c %s "$ST") RSZ=$(stat -c %s "$RAW")
now() { date +%s.%N; }
timed() {   # timed ROW BYTES CMD...: one line "ROW SECONDS GB/s"
	local row=$1 bytes=$2 t0 t1; shift 2
	t0=$(now); "$@" || { echo "$row failed" >&2; return 1; }; t1=$(now)
	awk -v r="$row" -v a="$t0" -v b="$t1" -v n="$bytes" 'BEGIN { printf "%s %.4f %.2f\n", r, b - a, n / (b - a) / 1e9 }'
}
: > "$LOG"
for p in $(seq "$PASSES"); do
	echo "# pass $p" >&2
	timed tensorctl-load "$SZ" "$CTL" load -q "$ST" "$M/st" | tee -a "$LOG"
	timed tensorctl-load-direct "$SZ" env TENSORCTL_COPY=direct "$CTL" load -q "$ST" "$M/std" | tee -a "$LOG"
	rm -rf "$M/std"
	python3 "$PY" load "$ST" 1 | tee -a "$LOG"
	"$LB" load "$ST" "$M/lb" 2 | tee -a "$LOG"
	timed tensorctl-load-raw "$RSZ" "$CTL" load -q --format raw "$RAW" "$M/raw" | tee -a "$LOG"
	timed tensorctl-load-raw-direct "$RSZ" env TENSORCTL_COPY=direct "$CTL" load -q --format raw "$RAW" "$M/rawd" | tee -a "$LOG"
	rm -rf "$M/rawd"
	timed tensorctl-load-raw-writes "$RSZ" env TFS_LOAD_FILL=0 "$CTL" load -q --format raw "$RAW" "$M/rawd" | tee -a "$LOG"
	rm -rf "$M/rawd"
	timed tensorctl-load-raw-j16 "$RSZ" "$CTL" load -q -j 16 --format raw "$RAW" "$M/rawd" | tee -a "$LOG"
	rm -rf "$M/rawd"
	rm -f "$T/out.safetensors"
	timed tensorctl-save "$SZ" "$CTL" save -q "$M/st" "$T/out.safetensors" | tee -a "$LOG"
	cmp "$ST" "$T/out.safetensors" || echo "save differs from the source" | tee -a "$LOG"
	rm -f "$T/out.safetensors"
	timed tensorctl-save-j16 "$SZ" "$CTL" save -q -j 16 "$M/st" "$T/out.safetensors" | tee -a "$LOG"
	rm -f "$T/out.safetensors"
	timed tensorctl-save-direct "$SZ" env TENSORCTL_COPY=direct "$CTL" save -q "$M/st" "$T/out.safetensors" | tee -a "$LOG"
	cmp "$ST" "$T/out.safetensors" || echo "save mapped differs from the source" | tee -a "$LOG"
	rm -f "$T/out.safetensors"
	timed tensorctl-save-pwrite "$SZ" env TFS_SAVE_MMAP=0 "$CTL" save -q "$M/st" "$T/out.safetensors" | tee -a "$LOG"
	"$LB" save "$ST" "$M/lbs" "$T/out2.safetensors" 2 | tee -a "$LOG"
	TFS_SAVE_MMAP=0 LB_TAG=-pwrite "$LB" save "$ST" "$M/lbs" "$T/out2.safetensors" 2 | tee -a "$LOG"
	python3 "$PY" save "$ST" "$T/out3.safetensors" 1 | tee -a "$LOG"
	LB_TAG=-devshm "$LB" save "$ST" "$M/lbs" "$SHM" 2 | tee -a "$LOG"
	TFS_SAVE_MMAP=0 LB_TAG=-devshm-pwrite "$LB" save "$ST" "$M/lbs" "$SHM" 2 | tee -a "$LOG"
	rm -f "$SHM" "$T/dd.bin"
	timed dd-write-8M-to-tmp "$SZ" dd if="$ST" of="$T/dd.bin" bs=8M status=none | tee -a "$LOG"
	rm -f "$T/dd.bin"
	"$LB" cold "$ST" "$M/lbc" | tee -a "$LOG"
	rm -rf "$M/st" "$M/raw" "$T/out.safetensors" "$T/out2.safetensors"
	timed tensorctl-load-fuse "$SZ" env TENSORCTL_COPY=fuse "$CTL" load -q "$ST" "$M/st" | tee -a "$LOG"
	rm -rf "$M/st"
	timed tensorctl-load-fuse-writes "$SZ" env TENSORCTL_COPY=fuse TFS_LOAD_FILL=0 "$CTL" load -q "$ST" "$M/st" | tee -a "$LOG"
	rm -rf "$M/st"
	timed tensorctl-load-fuse-j16 "$SZ" env TENSORCTL_COPY=fuse "$CTL" load -q -j 16 "$ST" "$M/st" | tee -a "$LOG"
	rm -rf "$M/st"
	timed host-backend-tensorctl-load "$SZ" "$CTL" load -q "$ST" "$H/st" | tee -a "$LOG"
	rm -rf "$H/st"
	timed host-backend-tensorctl-load-fuse "$SZ" env TENSORCTL_COPY=fuse "$CTL" load -q "$ST" "$H/st" | tee -a "$LOG"
	rm -rf "$H/st"
done
# A large raw file (BIG_GB=N GiB, 0: none; page cache and GPU memory must hold it), through
# the files and mapped, alternating: where the mapping's start-up stops mattering.
if [ "${BIG_GB:-0}" -gt 0 ]; then
	BIG=$T/big.bin BSZ=$((BIG_GB << 30))
	for _ in $(seq "$BIG_GB"); do head -c $((1 << 30)) "$RAW"; done > "$BIG"
	cat "$BIG" > /dev/null
	for p in $(seq "$PASSES"); do
		timed "tensorctl-load-raw-${BIG_GB}G" "$BSZ" env TENSORCTL_COPY=fuse "$CTL" load -q --format raw "$BIG" "$M/big" | tee -a "$LOG"
		rm -rf "$M/big"
		timed "tensorctl-load-raw-${BIG_GB}G-direct" "$BSZ" env TENSORCTL_COPY=direct "$CTL" load -q --format raw "$BIG" "$M/big" | tee -a "$LOG"
		rm -rf "$M/big"
	done
	rm -f "$BIG"
fi
"$LB" alloc "$ST" "$M/alloc" | tee -a "$LOG"
[ "${SWEEP:-1}" = 0 ] || "$LB" sweep "$ST" "$M/sw" | tee -a "$LOG"
echo
echo "file: $SZ bytes safetensors, $RSZ bytes raw; $PASSES passes; GB = 1e9 bytes"
echo
echo "| what | median s | median GB/s | runs |"
echo "| --- | ---: | ---: | ---: |"
awk '$1 !~ /^#/ && NF == 3 { n[$1]++; s[$1, n[$1]] = $2; g[$1, n[$1]] = $3; if (!($1 in o)) { o[$1] = ++k; name[k] = $1 } }
END { for (i = 1; i <= k; i++) { r = name[i]; c = n[r];
	for (a = 1; a <= c; a++) for (b = a + 1; b <= c; b++) if (s[r, b] < s[r, a]) { t = s[r, a]; s[r, a] = s[r, b]; s[r, b] = t; t = g[r, a]; g[r, a] = g[r, b]; g[r, b] = t }
	m = int((c + 1) / 2); printf "| %s | %.3f | %.2f | %d |\n", r, s[r, m], g[r, m], c } }' "$LOG"
rm -f "$ST" "$RAW" "$SHM"
finish >/dev/null
