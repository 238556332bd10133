# Writes to one file from several processes reach the daemon together (the open reply's
# FOPEN_PARALLEL_DIRECT_WRITES, fs/fuse/reply_open.c): the kernel would otherwise hand them
# over one at a time under the inode's lock. The daemon's stats keep the most writes it
# was copying at once; the bytes of 8 writers at 8 offsets all land.
. "$(dirname "$0")/../lib.sh"
one_mount
stats() { jfield "$(getfattr --only-values -n user.tensorfs.stats "$M" 2>/dev/null)" "$1"; }

head -c 64M /dev/urandom > "$T/src"
check "a 64 MiB tensor" dd if="$T/src" of="$M/w" bs=1M status=none
eq "one write at a time so far" 1 "$(stats writes_together_max)"
# Overlap is a matter of scheduling: rounds until seen, each a full rewrite whose bytes
# are checked.
for round in 1 2 3 4 5 6 7 8 9 10; do
	pids=
	for k in 0 1 2 3 4 5 6 7; do
		dd if="$T/src" of="$M/w" bs=1M skip=$((k * 8)) seek=$((k * 8)) count=8 \
			conv=notrunc status=none &
		pids="$pids $!"
	done
	wait $pids    # not the daemon, which mount_tfs started in the background
	cmp -s "$T/src" "$M/w" || break
	[ "$(stats writes_together_max)" -ge 2 ] && break
done
check "8 writers' bytes all landed (round $round)" cmp "$T/src" "$M/w"
check "writes to one file were copied together (most at once: $(stats writes_together_max))" \
	test "$(stats writes_together_max)" -ge 2
eq "the size stayed" 67108864 "$(size_of "$M/w")"
# Past the end the kernel takes one writer at a time again: a single writer extends it.
check "a write past the end" dd if="$T/src" of="$M/w" bs=1M count=1 seek=64 conv=notrunc status=none
eq "the size grew" 68157440 "$(size_of "$M/w")"
finish
