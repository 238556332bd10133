#!/bin/bash
# A tensor larger than a pool segment put to sleep in a preallocated host tier (issue 35,
# docs/tiers.md#preallocation): --preallocate cpu:POOL (segments of POOL/8), a tensor of 3
# segments made on device 0, then its first sleep into the host tier, its wake and a second
# sleep, timed through setfattr, on ROUNDS fresh mounts. With the pool's runs the first
# sleep is carved from a run made and registered at start; before them it made an object
# of the tensor's size (and on the cuda backend registered it with the driver), giving
# idle segments back to make room. "objects made" counts the keeper's objects the first
# sleep added (0: served from the reservation).
#   tests/bench/prealloc_run.sh [BUILD] [POOL_MIB] [ROUNDS]     (default build 1024 3)
# The host backend with a stand-in device 0 (-o host_devices=1); BENCH_BACKEND=cuda uses
# the cuda backend and GPU 0 (the GPU machine). Prints a Markdown table.
cd "$(dirname "$0")/../.." || exit 1
BUILD=${1:-build}
POOL=${2:-1024}
ROUNDS=${3:-3}
. tests/integration/lib.sh
start_redis || exit 1
if [ "${BENCH_BACKEND:-host}" = cuda ]; then hostopts=(); else hostopts=(--backend host -o host_devices=1); fi
size=$(( POOL / 8 * 3 ))
ms() { echo $(( ($2 - $1) / 1000000 )); }
echo "| round | first sleep ms | wake ms | second sleep ms | objects made |"
echo "| --- | --- | --- | --- | --- |"
for r in $(seq "$ROUNDS"); do
	M=$T/m$r
	mount_tfs "$M" "${hostopts[@]}" --preallocate "cpu:${POOL}M" || exit 1
	mkdir "$M/h"
	setfattr -n user.tensor.device -v cpu "$M/h"
	printf x > "$M/h/probe"
	kdir=$(dirname "$(shm_of "$M/h/probe")")
	truncate -s "${size}M" "$M/w"
	dd if=/dev/zero of="$M/w" bs=1M count="$size" conv=notrunc status=none
	n0=$(find "$kdir" -type f -name '[!.]*' | wc -l)
	[ "${BENCH_BACKEND:-host}" = cuda ] || n0=$((n0 - 1))   # w's own object on device 0
	t0=$(date +%s%N); setfattr -n user.tensor.device -v cpu "$M/w"; t1=$(date +%s%N)
	n1=$(find "$kdir" -type f -name '[!.]*' | wc -l)
	setfattr -n user.tensor.device -v 0 "$M/w"; t2=$(date +%s%N)
	setfattr -n user.tensor.device -v cpu "$M/w"; t3=$(date +%s%N)
	echo "| $r | $(ms "$t0" "$t1") | $(ms "$t1" "$t2") | $(ms "$t2" "$t3") | $((n1 - n0)) |"
	rm -r "$M/h" "$M/w"
	umount_tfs "$M"
done
echo
echo "# pool ${POOL} MiB (segments of $((POOL / 8)) MiB), tensor ${size} MiB, backend ${BENCH_BACKEND:-host}, $(nproc) CPUs"
finish > /dev/null
