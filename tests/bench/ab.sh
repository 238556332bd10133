#!/bin/bash
# tests/bench/ab.sh DIR... : A/B of builds on one machine. For each tree DIR (a checkout
# with `make all` done), a mount on a fresh redis: warm open latency (lib_bench open) and
# the create -> shape -> unlink rates (1, 8, 8 with a directory each). ROUNDS rounds
# (default 2) alternate the trees, so that the machine's drift shows as spread.
# AB_META lists the create runs, comma-separated (default "1,8,8 dirs"; empty: none).
# AB_ROWS: the lib_bench open rows shown (an extended regex; default "warm|breakdown",
# "cold" for the cold opens), NCOLD the cold rounds (default 100). NFIRST: also the first
# open of that many new tensors (lib_bench first; the trees' lib_bench must have it).
# Needs root (mounts). Example: tests/bench/ab.sh /tmp/old /tmp/new
ROUNDS=${ROUNDS:-2}
for r in $(seq $ROUNDS); do
for d in "$@"; do
	( cd $d || exit 1
	BUILD=build
	. tests/integration/lib.sh
	gcc -O2 -std=gnu11 -pthread -o $T/gb tests/bench/gpu_bench.c || exit 1
	start_redis || exit 1
	mount_tfs "$T/m" --node ab ${AB_ARGS:-} || exit 1
	touch "$T/m/lat"
	setfattr -n user.tensor.dtype -v f32 "$T/m/lat"
	setfattr -n user.tensor.shape -v "[1048576]" "$T/m/lat"
	echo "== round $r: $d"
	build/bench/lib_bench open "$T/m/lat" ${NOPEN:-5000} ${NCOLD:-100} | grep -E "${AB_ROWS:-warm|breakdown}"
	[ -z "${NFIRST:-}" ] || build/bench/lib_bench first "$T/m" "$NFIRST"
	IFS=, read -ra confs <<< "${AB_META-1,8,8 dirs}"
	for a in "${confs[@]}"; do $T/gb meta "$T/m" ${NMETA:-10000} $a; done
	finish ) 2>&1
done
done
