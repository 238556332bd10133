# Without -o io_uring the daemon stays on /dev/fuse even where the kernel offers the ring
# (enable_uring Y): the transport is chosen by the option alone. enable_uring is global:
# put back on every way out.
# tfs-test: alone (it sets the fuse module's enable_uring, which every mount of the machine shares)
. "$(dirname "$0")/../lib.sh"
enable_uring Y
one_mount
printf 'classic\n' > "$M/a"
eq "a byte round trip" "classic" "$(cat "$M/a")"
st=$(getfattr --only-values -n user.tensorfs.stats "$M" 2>/dev/null)
eq "no request came over a ring" 0 "$(jfield "$st" uring_requests)"
check "requests were served" test "$(jfield "$st" requests)" -gt 0
check "the log never mentions io_uring" not grep -q "io_uring" "$T/m.log"
eq "no ring threads" 0 "$(cat /proc/"$(daemon_pid "$M")"/task/*/comm | grep -c '^tfs-ring-')"
umount_tfs "$M"
restore_uring
eq "enable_uring is back as it was" "$URING_PREV" "$(cat "$URING_SWITCH")"
finish
