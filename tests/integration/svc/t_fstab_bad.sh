# An fstab line with an option the daemon does not know, or a bad value: mount fails with
# the daemon's message and a non-zero status, nothing is mounted, no daemon is left.
. "$(dirname "$0")/../lib.sh"
cd "$T"
HELPER=$(command -v mount.fuse3 || echo /sbin/mount.fuse3)
if [ ! -x "$HELPER" ]; then
	echo "skip - bad fstab options: mount.fuse3 is not installed (Debian package fuse3)"
	finish; exit 0
fi
start_redis || exit 1
M=$T/mnt
mkdir -p "$M"
echo "$TFS#tensorfs $M fuse redis=$URL,bogus=1,noauto 0 0" > unknown
echo "$TFS#tensorfs $M fuse redis=$URL,max-bytes=lots,noauto 0 0" > badsize
check_err "an unknown option: mount fails naming it" "unknown option" timeout 30 mount -T unknown "$M"
check "nothing is mounted" bash -c "! mountpoint -q '$M'"
check_err "max-bytes=lots: mount fails naming the value" "max-bytes 'lots'" timeout 30 mount -T badsize "$M"
check "nothing is mounted" bash -c "! mountpoint -q '$M'"
# Counted by this mount point, not machine-wide: other tests run daemons beside this one.
eq "no daemon is left running" 0 "$(pgrep -c -f -- "tensorfs.* $M( |$)" || true)"
eq "no records were written" "" "$(rcli --scan --pattern 'tensorfs:*')"
finish
