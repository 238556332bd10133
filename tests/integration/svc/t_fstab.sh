# An /etc/fstab line through mount(8) and mount.fuse3: `mount MNT` and `umount MNT` as a
# user types them (here with a temporary fstab, mount -T), with options fstab writes:
# the daemon's as key=value, and mount(8)'s own (noauto, nofail, _netdev), which mount(8)
# and mount.fuse3 filter before the daemon sees them. The daemon runs in the background,
# as mount.fuse3 expects: mount returns once it serves, umount ends it.
. "$(dirname "$0")/../lib.sh"
cd "$T"
HELPER=$(command -v mount.fuse3 || echo /sbin/mount.fuse3)
if [ ! -x "$HELPER" ]; then
	echo "skip - fstab mount: mount.fuse3 is not installed (Debian package fuse3)"
	finish; exit 0
fi
start_redis || exit 1
M=$T/mnt
mkdir -p "$M"
# mount(8) gives its helpers a PATH of its own, so the line names this build's daemon by
# path, with fuse's PROGRAM#SOURCE form; an installed daemon is found by the type alone
# (fuse.tensorfs, t_mount_helper).
echo "$TFS#tensorfs $M fuse redis=$URL,log=$T/mnt.log,max-bytes=64M,node=fst,noauto,nofail,_netdev 0 0" > fstab
check "mount -T FSTAB MNT mounts the line" timeout 30 mount -T "$T/fstab" "$M"
check "it is a fuse.tensorfs mount" grep -q "^tensorfs $M fuse.tensorfs " /proc/mounts
eq "max-bytes=64M from the line: statfs reports 64 MiB" 67108864 \
	"$(stat -f -c '%b %S' "$M" | awk '{print $1 * $2}')"
pid=$(getfattr --only-values -n user.tensorfs.stats "$M" 2>/dev/null | grep -o '"pid":[0-9]*' | cut -d: -f2)
check "the daemon serving it is running" kill -0 "${pid:-none}"
head -c 4096 /dev/urandom > blob
check "a tensor written through it reads back" bash -c "cp blob '$M/x' && cmp blob '$M/x'"
eq "node=fst from the line names the records" fst "$(xget "$M/x" node)"
check "umount MNT unmounts" timeout 30 umount "$M"
check "nothing is mounted there any more" bash -c "! mountpoint -q '$M'"
for _ in $(seq 400); do kill -0 "${pid:-none}" 2>/dev/null || break; sleep 0.05; done
check "the daemon has exited" bash -c "! kill -0 ${pid:-none} 2>/dev/null"
eq "its tensor records are removed" "" "$(rcli --scan --pattern 'tensorfs:tensor:*')"
eq "no shared memory is left" "" "$(ls /dev/shm | grep "^tensorfs\.${pid:-none}\." || true)"
check "its log says it unmounted and holds no sanitizer report" \
	bash -c "grep -q 'unmounting $M' mnt.log && ! grep -q Sanitizer mnt.log"
finish
