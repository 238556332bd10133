# The fstab line of an installed daemon, `tensorfs MNT fuse.tensorfs OPTIONS 0 0`: mount(8)
# runs `mount.fuse3 tensorfs MNT -t tensorfs -o rw,OPTIONS`, which finds `tensorfs` in
# PATH and runs `tensorfs tensorfs MNT -o OPTIONS`: SOURCE MOUNTPOINT, kernel flags (rw,
# nodev, nosuid, noexec) beside the daemon's key=value options. This calls mount.fuse3 as
# mount(8) does, with this build first in PATH.
. "$(dirname "$0")/../lib.sh"
cd "$T"
HELPER=$(command -v mount.fuse3 || echo /sbin/mount.fuse3)
if [ ! -x "$HELPER" ]; then
	echo "skip - mount helper: mount.fuse3 is not installed (Debian package fuse3)"
	finish; exit 0
fi
start_redis || exit 1
M=$T/mnt
mkdir -p "$M"
check "mount.fuse3 tensorfs MNT -t tensorfs -o ... mounts" timeout 30 env PATH="$(dirname "$TFS"):$PATH" \
	"$HELPER" tensorfs "$M" -t tensorfs -o "rw,nodev,nosuid,noexec,redis=$URL,log=$T/mnt.log,device=0,threads=4,entry_timeout=0"
check "it is a fuse.tensorfs mount with nodev,nosuid,noexec" \
	bash -c "grep '^tensorfs $M fuse.tensorfs ' /proc/mounts | grep nosuid | grep nodev | grep -q noexec"
pid=$(getfattr --only-values -n user.tensorfs.stats "$M" 2>/dev/null | grep -o '"pid":[0-9]*' | cut -d: -f2)
check "threads=4 reaches the daemon" grep -q "serving with 4 FUSE worker threads" mnt.log
check "a tensor can be made on it" bash -c "touch '$M/t' && setfattr -n user.tensor.shape -v '[8]' '$M/t' && [ \$(stat -c %s '$M/t') = 8 ]"
check "umount MNT unmounts" timeout 30 umount "$M"
for _ in $(seq 400); do kill -0 "${pid:-none}" 2>/dev/null || break; sleep 0.05; done
check "the daemon has exited" bash -c "! kill -0 ${pid:-none} 2>/dev/null"
check "its log holds no sanitizer report" bash -c "! grep -q Sanitizer mnt.log"
finish
