# A written mark (user.tensorfs.event, an IPC event handle from tfs_mark_written) on the
# host backend: nothing to wait for, reads go on; garbage of the wrong size is no mark.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
echo marked > "$M/mk"
mark_then_read() { setfattr -n user.tensorfs.event -v "$1" "$M/mk" && [ "$(cat "$M/mk")" = marked ]; }
check "a written mark on the host backend: reads go on" mark_then_read "0x$(printf '%0128d' 0)"
check "a mark of the wrong size: stored, reads go on" mark_then_read junk
finish
