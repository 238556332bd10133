#!/usr/bin/env bash
# The fixed costs of `tensorctl load` (issue 38, "small loads without fixed costs"): for a
# tiny safetensors file (3 tensors), 512 tensors of 16 KiB (the cost per tensor), a
# ~200 MB one (FIXED_MB; LLM layer shapes) and a
# model directory of 3 shards, the time from the command's spawn to its first tensor in
# the mount and to its end (load_fixed.c: an inotify watcher, asleep while the command
# runs, its cost not on the command's path), beside the spawn of /bin/true (what any
# process costs here). With OLD_BUILD, the same for that build's daemon and tensorctl on a
# second mount of the same redis-server (a second node: each build loads under names of
# its own, the namespace being one), round for round alternated with BUILD's.
# Then the stages of a tiny load from `strace -f -ttt -T` (load_fixed_stages.py), the
# quickest of STRACE_RUNS; strace slows every call, so only the shares mean something.
# Source files in the page cache. Prints Markdown tables.
#   usage: tests/bench/load_fixed.sh [BUILD [OLD_BUILD]]
#   env: RUNS=5 (per round) ROUNDS=3 FIXED_MB=200 BACKEND_OPTS="--backend host"
#        CASES="true tiny many mid model" (the rows) STRACE_RUNS=5
#        (on the GPU machine: BACKEND_OPTS= for the cuda backend)
set -u
BUILD=${1:-build}
OLD=${2:-}
. "$(dirname "$0")/../integration/lib.sh"
RUNS=${RUNS:-5}
ROUNDS=${ROUNDS:-3}
BACKEND_OPTS=${BACKEND_OPTS---backend host}
LF="$ROOT/$BUILD/bench/load_fixed"
[ -x "$LF" ] && [ -x "$ROOT/$BUILD/tensorctl" ] || { echo "build first (make O=$BUILD)"; exit 1; }
[ -z "$OLD" ] || [ -x "$OLD/tensorctl" ] || [ -x "$ROOT/$OLD/tensorctl" ] || { echo "no $OLD/tensorctl"; exit 1; }
case "$OLD" in /*|"") ;; *) OLD=$ROOT/$OLD ;; esac
python3 "$ROOT/tests/bench/load_fixed_files.py" "$T" || exit 1
cat "$T"/*.safetensors "$T"/model/* > /dev/null      # into the page cache
start_redis || exit 1
# shellcheck disable=SC2086
mount_tfs "$T/new" --node new $BACKEND_OPTS || exit 1
BUILDS="new"
if [ -n "$OLD" ]; then
	# shellcheck disable=SC2086
	TFS="$OLD/tensorfs" mount_tfs "$T/old" --node old $BACKEND_OPTS || exit 1
	BUILDS="new old"
fi
ctl_of() { if [ "$1" = new ]; then echo "$ROOT/$BUILD/tensorctl"; else echo "$OLD/tensorctl"; fi; }

echo "tensorctl load, fixed costs: $RUNS runs x $ROUNDS rounds per row${OLD:+, alternated with $OLD}"
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB RAM, $(uname -r); backend: $BACKEND; build $(git -C "$ROOT" rev-parse --short HEAD)"
echo "files: tiny $(stat -c %s "$T/tiny.safetensors") B, mid $(stat -c %s "$T/mid.safetensors") B ($(python3 -c "import json,struct,sys;f=open(sys.argv[1],'rb');n=struct.unpack('<Q',f.read(8))[0];print(len(json.loads(f.read(n)))-1)" "$T/mid.safetensors") tensors), model $(du -cb "$T"/model/*.safetensors | tail -1 | cut -f1) B in 3 shards"
echo
for case in ${CASES:-true tiny many mid model}; do
	for r in $(seq "$ROUNDS"); do
		for b in $BUILDS; do
			ctl=$(ctl_of "$b")
			case $case in
			true) "$LF" "$RUNS" "$T/$b/none" /bin/true ;;
			tiny) "$LF" "$RUNS" "$T/$b/tiny_$b" "$ctl" load -q "$T/tiny.safetensors" "$T/$b/tiny_$b" ;;
			many) "$LF" "$RUNS" "$T/$b/many_$b" "$ctl" load -q "$T/many.safetensors" "$T/$b/many_$b" ;;
			mid) "$LF" "$RUNS" "$T/$b/mid_$b" "$ctl" load -q "$T/mid.safetensors" "$T/$b/mid_$b" ;;
			model) "$LF" "$RUNS" "$T/$b/model_$b" "$ctl" load -q "$T/model" "$T/$b/model_$b" ;;
			esac > "$T/out" || { cat "$T/out"; echo "$case on $b failed"; finish; exit 1; }
			grep '^run' "$T/out" | sed "s/^/$case $b $r /" >> "$T/all"
			grep -o 'failed [1-9][0-9]*' "$T/out" | sed "s/^/$case $b: /" >> "$T/failures"
		done
	done
done
cat "$T/all" > "$T/runs"
echo "| load | build | first tensor ms: min / median / max | end ms: min / median / max | GB/s at the median end | runs |"
echo "| --- | --- | ---: | ---: | ---: | ---: |"
python3 - "$T/runs" "$(stat -c %s "$T/tiny.safetensors")" "$(stat -c %s "$T/mid.safetensors")" "$(du -cb "$T"/model/* | tail -1 | cut -f1)" "$(stat -c %s "$T/many.safetensors")" <<'PY'
import sys, statistics as st
size = {"true": 0, "tiny": int(sys.argv[2]), "mid": int(sys.argv[3]), "model": int(sys.argv[4]), "many": int(sys.argv[5])}
rows = {}
for l in open(sys.argv[1]):
    case, b, r, _, n, first, end, u, s = l.split()
    rows.setdefault((case, b), ([], []))
    if float(first) >= 0: rows[(case, b)][0].append(float(first))
    rows[(case, b)][1].append(float(end))
names = {"true": "/bin/true (spawn only)", "tiny": "tiny (3 tensors, 5 KB)",
         "many": "many (512 tensors of 16 KiB)",
         "mid": "mid (~200 MB)", "model": "model dir (3 shards)"}
for (case, b), (f, e) in rows.items():
    fs = "%.1f / %.1f / %.1f" % (min(f), st.median(f), max(f)) if f else "-"
    gbs = "%.2f" % (size[case] / st.median(e) / 1e6) if size[case] else "-"
    print("| %s | %s | %s | %.1f / %.1f / %.1f | %s | %d |" % (names[case], b, fs, min(e), st.median(e), max(e), gbs, len(e)))
PY
[ -s "$T/failures" ] && { echo; echo "failed runs (run again):"; cat "$T/failures"; }
if command -v strace >/dev/null; then
	echo
	for b in $BUILDS; do
		ctl=$(ctl_of "$b")
		best=
		for i in $(seq "${STRACE_RUNS:-5}"); do
			rm -rf "$T/$b/tiny_$b"
			strace -f -ttt -T -o "$T/strace.$b.$i" "$ctl" load -q "$T/tiny.safetensors" "$T/$b/tiny_$b" ||
				{ echo "strace run failed"; continue; }
			python3 "$ROOT/tests/bench/load_fixed_stages.py" "$T/strace.$b.$i" > "$T/stages.$b.$i" || continue
			gone=$(awk -F'|' '/process gone/ {print $3 + 0}' "$T/stages.$b.$i")
			if [ -z "$best" ] || [ "$(echo "$gone < $bgone" | bc -l)" = 1 ]; then best=$i; bgone=$gone; fi
		done
		echo "stages of one tiny load, $b build, the quickest of ${STRACE_RUNS:-5} under strace -f -ttt -T (which slows every call):"
		echo
		[ -n "$best" ] && cat "$T/stages.$b.$best"
		echo
	done
fi
finish >/dev/null
