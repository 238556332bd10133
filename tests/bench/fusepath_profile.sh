#!/usr/bin/env bash
# Where a 1 MiB read or write request's time goes in the daemon (issue 19): a build made
# with `make O=build-prof CFLAGS=-DTFS_PROFILE_IO` (loop.h) serves 1 GiB of 1 MiB pwrites,
# twice, and of preads, in one stream, on a host mount (and a cuda one where a GPU is); at
# unmount it prints, per FUSE opcode (15 read, 16 write), the microseconds in the op and
# in its copy.
#   tests/bench/fusepath_profile.sh [PROFILE_BUILD [BENCH_BUILD]]
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${1:-build-prof}
BENCH=$PWD/${2:-build}/bench/tfsbench
. tests/integration/lib.sh
start_redis || exit 1
bes=(host)
[ -e /dev/nvidiactl ] && bes+=(cuda)
for be in "${bes[@]}"; do
	m=$T/$be
	mount_tfs "$m" --node "n$be" --prefix "p$be" --queue "q$be" --backend "$be" || exit 1
	echo "$be: $("$BENCH" io "$m/big" $((1 << 30)) 1 write) (sizing)" \
		"$("$BENCH" io "$m/big" $((1 << 30)) 1 write) $("$BENCH" io "$m/big" $((1 << 30)) 1 read)"
	umount_tfs "$m"
	grep -o "profile: .*" "$T/$be.log" | sed "s/^/$be /"
done
cd /
finish
