# -o io_uring where the kernel does not offer the ring (enable_uring N): the daemon says so
# once and serves everything over /dev/fuse. enable_uring is global: put back on every way out.
# tfs-test: alone (it sets the fuse module's enable_uring, which every mount of the machine shares)
. "$(dirname "$0")/../lib.sh"
enable_uring N
one_mount -o io_uring
stats() { jfield "$(getfattr --only-values -n user.tensorfs.stats "$M" 2>/dev/null)" "$1"; }

printf 'over /dev/fuse\n' > "$M/a"
eq "a byte round trip" "over /dev/fuse" "$(cat "$M/a")"
head -c 8M /dev/urandom > "$T/src"
check "an 8 MiB write" dd if="$T/src" of="$M/big" bs=1M status=none
check "reads back the same bytes" cmp "$T/src" "$M/big"
eq "the log says why, once" 1 "$(grep -c "io_uring: the kernel does not offer" "$T/m.log")"
eq "no request came over a ring" 0 "$(stats uring_requests)"
check "requests were served" test "$(stats requests)" -gt 0
umount_tfs "$M"
restore_uring
eq "enable_uring is back as it was" "$URING_PREV" "$(cat "$URING_SWITCH")"
finish
