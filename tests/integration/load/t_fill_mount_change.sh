# The daemon keeps which mounts are local file systems until the mount table changes
# (fs/util/proc.h, tfs_proc_mount_local): a fill from a file on a tmpfs is served; once
# that tmpfs is gone and a FUSE file system is mounted in its place (the kernel gives mount
# ids again, the lowest free first, so often the same id), a fill from a file there is
# refused (EXDEV) as it was before anything was kept, and a tmpfs mounted again serves.
. "$(dirname "$0")/../lib.sh"
one_mount
FILL="$HELPERS/fill_tool"
P=$T/place
mkdir -p "$P"
if ! mount -t tmpfs -o size=4m tfs-test "$P" 2>/dev/null; then
	echo "skip - load/t_fill_mount_change: cannot mount a tmpfs (not root?)"
	finish
	exit 0
fi
head -c 65536 /dev/urandom > "$P/src.bin"
head -c 65536 /dev/zero > "$M/t"
check "a fill from a tmpfs file" "$FILL" "$M/t" "$P/src.bin"
check "its bytes" cmp "$P/src.bin" "$M/t"
cp "$M/t" before.bin
umount "$P"
mount_tfs "$P" --node other --backend host || { finish; exit 1; }
head -c 65536 /dev/urandom > "$P/other"
eq "a fill from a FUSE file mounted where the tmpfs was: EXDEV" "error: EXDEV" "$("$FILL" "$M/t" "$P/other" 2>&1)"
check "the tensor unchanged" cmp before.bin "$M/t"
umount_tfs "$P"
mount -t tmpfs -o size=4m tfs-test "$P" || { nok "tmpfs mounted again"; finish; exit 1; }
head -c 65536 /dev/urandom > "$P/src2.bin"
check "a fill from a tmpfs mounted again" "$FILL" "$M/t" "$P/src2.bin"
check "its bytes" cmp "$P/src2.bin" "$M/t"
umount "$P"
finish
