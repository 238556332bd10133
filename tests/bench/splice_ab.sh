#!/bin/bash
# Reads through a mount with and without spliced read replies (ops_table.c, ops_file.c), alternating
# fs.pipe-max-size between 1 MiB (no splice without CAP_SYS_RESOURCE) and 2 MiB, two
# rounds, a fresh daemon each time. Needs root and a writable /proc/sys (it leaves the
# limit at 2 MiB). Usage: tests/bench/splice_ab.sh [BUILD]; the cuda backend where a GPU is.
cd "$(dirname "$0")/../.." || exit 1
BUILD=${1:-build}
. tests/integration/lib.sh
start_redis || exit 1
for r in 1 2; do
for pm in 1048576 2097152; do
	echo $pm > /proc/sys/fs/pipe-max-size
	M=$T/m$pm$r
	mount_tfs "$M" --node s$pm$r --prefix p$pm$r --queue q$pm$r || exit 1
	grep -h "reads:" "$M.log" "$T"/*.log 2>/dev/null | tail -1
	build/bench/tfsbench io $M/big $((1<<30)) 1 write > /dev/null
	echo "pipe-max $pm: $(build/bench/tfsbench io $M/big $((1<<30)) 1 read) $(build/bench/tfsbench io $M/big $((1<<30)) 8 read) $(build/bench/tfsbench io $M/big $((1<<30)) 1 read) $(build/bench/tfsbench io $M/big $((1<<30)) 8 read)"
	rm -f $M/big
done
done
grep -rh "reads:" $T 2>/dev/null | sort | uniq -c
finish
