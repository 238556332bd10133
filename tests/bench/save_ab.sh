#!/usr/bin/env bash
# tests/bench/save_ab.sh OLD [PASSES]: the save rows of the tree OLD beside this one (both
# with `make` done), passes alternating, one cuda mount of this tree's daemon on a fresh
# redis. The 2.17 GiB safetensors file of load_bench.sh is loaded once, then saved back
# into the page cache of /tmp by each tree's `tensorctl save` (8 and 16 threads) and by
# tfs_save in a warm process (load_bench.c; 8 and 16 threads, two saves each). Prints
# "ROW SECONDS GB/s" lines; every tensorctl save is compared with the source. Needs root,
# the GPU machine, python3 with torch and safetensors. Example: tests/bench/save_ab.sh /tmp/old
set -u
BUILD=build
. "$(dirname "$0")/../integration/lib.sh"
OLD=$(cd "$1" && pwd)/build NEW=$ROOT/build PASSES=${2:-3}
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node bench || exit 1
ST=$T/model.safetensors
python3 "$ROOT/tests/bench/load_bench.py" make "$ST" || exit 1
SZ=$(stat -c %s "$ST")
"$NEW/tensorctl" load -q "$ST" "$M/st" || exit 1
now() { date +%s.%N; }
timed() {   # timed ROW CMD...
	local row=$1 t0 t1; shift
	t0=$(now); "$@" || { echo "$row failed"; return 1; }; t1=$(now)
	awk -v r="$row" -v a="$t0" -v b="$t1" -v n="$SZ" 'BEGIN { printf "%s %.4f %.2f\n", r, b - a, n / (b - a) / 1e9 }'
}
for p in $(seq "$PASSES"); do
	for b in old new; do
		B=$OLD; [ $b = new ] && B=$NEW
		rm -f "$T/out"; timed $b-tensorctl-save "$B/tensorctl" save -q "$M/st" "$T/out"
		cmp -s "$ST" "$T/out" || echo "$b: the save differs from the source"
		rm -f "$T/out"; timed $b-tensorctl-save-j16 "$B/tensorctl" save -q -j 16 "$M/st" "$T/out"
		rm -f "$T/out"; LB_TAG=-$b "$B/bench/load_bench" save "$ST" "$M/lbs" "$T/out" 2
		rm -f "$T/out"; LB_THREADS=16 LB_TAG=-$b-j16 "$B/bench/load_bench" save "$ST" "$M/lbs" "$T/out" 2
		rm -f "$T/out"
	done
done
finish
