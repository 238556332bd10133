#!/usr/bin/env bash
# A Hugging Face model directory into tensorfs, and processes attaching to it (issue 34),
# in one run on the GPU machine (cuda backend; python3 with torch, transformers and
# safetensors):
#   - a Llama of GB GB (default 16: Llama-3-8B's shapes, 291 tensors, 4 shards) written by
#     save_pretrained, its files in the page cache;
#   - loads of the directory, alternating, PASSES times: `tensorctl load DIR DEST`,
#     transformers' from_pretrained(device_map="cuda") and safetensors' load_file of each
#     shard, each in a warm process for the latter two; beside a pinned 4 GiB copy, the
#     link's ceiling;
#   - a fresh process from its start to its first forward pass: tensorfs.transformers
#     .from_pretrained of the loaded directory against transformers' from_pretrained of
#     the source, the logits of both compared;
#   - the attach step alone in a warm process, three times.
# Prints every row, then a Markdown table of medians.
#   usage: tests/bench/model_bench.sh [BUILD]     (env: GB=16, PASSES=3)
set -u
BUILD=${1:-build}
. "$(dirname "$0")/../integration/lib.sh"
CTL="$ROOT/$BUILD/tensorctl"
PY="$ROOT/tests/bench/model_bench.py"
GB=${GB:-16} PASSES=${PASSES:-3}
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" TENSORFS_LIBRARY="$ROOT/$BUILD/libtensorfs.so"
[ -x "$CTL" ] || { echo "build first (make O=$BUILD)"; exit 1; }
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node bench || exit 1
echo "cuda mount on $M; $(nproc) cores; $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
SRC=$T/model LOG=$T/rows.txt
python3 "$PY" make "$SRC" "$GB" || exit 1
SZ=$(cat "$SRC"/*.safetensors | wc -c)
now() { date +%s.%N; }
timed() {   # timed ROW BYTES CMD...
	local row=$1 bytes=$2 t0 t1; shift 2
	t0=$(now); "$@" || { echo "$row failed" >&2; return 1; }; t1=$(now)
	awk -v r="$row" -v a="$t0" -v b="$t1" -v n="$bytes" 'BEGIN { printf "%s %.4f %.2f\n", r, b - a, n / (b - a) / 1e9 }'
}
cat "$SRC"/* > /dev/null
: > "$LOG"
python3 "$PY" ceiling | tee -a "$LOG"
for p in $(seq "$PASSES"); do
	echo "# pass $p" >&2
	timed tensorctl-load-model-dir "$SZ" "$CTL" load -q "$SRC" "$M/model" | tee -a "$LOG"
	rm -rf "$M/model"
	python3 "$PY" hf "$SRC" | tee -a "$LOG"
	python3 "$PY" loadfile "$SRC" | tee -a "$LOG"
done
"$CTL" load -q "$SRC" "$M/model" || exit 1
for p in $(seq "$PASSES"); do
	python3 "$PY" attach "$M/model" "$(now)" | tee -a "$LOG" | tee "$T/ours.txt"
	python3 "$PY" hfattach "$SRC" "$(now)" | tee -a "$LOG" | tee "$T/theirs.txt"
	a=$(grep ^logits "$T/ours.txt") b=$(grep ^logits "$T/theirs.txt")
	if [ -n "$a" ] && [ "$a" = "$b" ]; then echo "# logits equal: $a"; else echo "# LOGITS DIFFER: tensorfs '$a', transformers '$b'"; fi
done
python3 "$PY" step "$M/model" | tee -a "$LOG"
echo
echo "| row | median s | median GB/s | passes (s) |"
echo "| --- | --- | --- | --- |"
awk 'NF >= 2 && $1 !~ /^#|^logits/ { n[$1]++; t[$1, n[$1]] = $2; g[$1, n[$1]] = $3; if (!($1 in o)) { o[$1] = ++k; name[k] = $1 } }
END { for (i = 1; i <= k; i++) { r = name[i]; m = n[r];
	for (a = 1; a <= m; a++) { ts[a] = t[r, a]; gs[a] = g[r, a] }
	for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) { if (ts[b] < ts[a]) { x = ts[a]; ts[a] = ts[b]; ts[b] = x } if (gs[b] < gs[a]) { x = gs[a]; gs[a] = gs[b]; gs[b] = x } }
	all = ""; for (a = 1; a <= m; a++) all = all (a > 1 ? " / " : "") t[r, a];
	printf "| %s | %s | %s | %s |\n", r, ts[int((m + 1) / 2)], (gs[1] == "" ? "" : gs[int((m + 1) / 2)]), all } }' "$LOG"
finish
