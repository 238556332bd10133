# tensorctl mount and umount: a usable mount and a clean unmount; umount refuses what is
# no mount point; a mount whose daemon died is a clear error and umount still cleans it.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
"$CTL" load a.npy "$M/n_a"
mkdir -p "$T/plain"
M3=$T/m3
mkdir -p "$M3"
usable() { "$CTL" create "$M3/z" --dtype u8 --shape 3 && "$CTL" ls "$M3" | grep -qx z && "$CTL" rm "$M3/z"; }
check "tensorctl mount" "$CTL" mount "$M3" --redis "$URL" --prefix m3 --log "$T/m3.log"
check "it is mounted" mountpoint -q "$M3"
check "usable through tensorctl" usable
check "tensorctl umount" "$CTL" umount "$M3"
for _ in $(seq 200); do mountpoint -q "$M3" || break; sleep 0.1; done
check "it is unmounted" not mountpoint -q "$M3"
fails_with "umount of a plain directory" "not a tensorfs mount point" "$CTL" umount "$T/plain"
fails_with "umount of a directory inside a mount" "not a tensorfs mount point" "$CTL" umount "$M/n_a"
M4=$T/m4
mkdir -p "$M4"
"$CTL" mount "$M4" --redis "$URL" --prefix m4 --log "$T/m4.log"
# The daemon and its memory keeper both (the keeper would start the daemon again, and the
# daemon a keeper): wait until both are there, since the mount is up before the daemon
# forks its keeper; one alone killed comes back.
pids4() { ps -eo pid=,args= | awk -v m="$M4" '$2 ~ /tensorfs$/ && $NF == m {print $1}'; }
for _ in $(seq 300); do [ "$(pids4 | wc -l)" -ge 2 ] && break; sleep 0.1; done
pid4=$(pids4)
# Stopped first, then killed: each restarts the other when it sees it die, and the two
# SIGKILLs do not land at once (a loaded machine ran the daemon long enough to start a new
# keeper, which started the daemon again); a stopped process sees nothing.
if [ -n "$pid4" ] && kill -STOP $pid4 && kill -9 $pid4; then
	# The kernel aborts the connection once the last holder of /dev/fuse has exited;
	# on a loaded machine that is later than the kill.
	for _ in $(seq 300); do
		alive=0
		for p in $pid4; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && ! "$CTL" ls "$M4" >/dev/null 2>&1 && break
		sleep 0.1
	done
	fails_with "ls of a mount whose daemon died" "daemon is gone" "$CTL" ls "$M4"
	check "umount of a dead mount" "$CTL" umount "$M4"
	check "dead mount gone" not mountpoint -q "$M4"
else
	nok "could not find the daemon of $M4"
fi
check_err "mount with bad options" "tensorctl: mount: .*failed" "$CTL" mount "$M3" --no-such-option
finish
