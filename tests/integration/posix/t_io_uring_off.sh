# Without -o io_uring the daemon stays on /dev/fuse even where the kernel offers the ring
# (enable_uring Y): the transport is chosen by the option alone. enable_uring is global:
# put back on every way out.
. "$(dirname "$0")/../lib.sh"
ENABLE=/sys/module/fuse/parameters/enable_uring
if [ ! -w "$ENABLE" ]; then
	echo "skip - io_uring: $ENABLE is not writable (needs root and Linux 6.14+)"
	exit 0
fi
PREV=$(cat "$ENABLE")
restore_uring() { echo "$PREV" > "$ENABLE"; }
eval "$(trap -p EXIT | sed "s/^trap -- '/trap -- 'restore_uring; /")"
echo Y > "$ENABLE"
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
eq "enable_uring is back as it was" "$PREV" "$(cat "$ENABLE")"
finish
