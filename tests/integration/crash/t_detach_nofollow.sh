# The keeper that stops detaches its own dead mount, never another one that a symlink
# put in its place leads to (umount2 with UMOUNT_NOFOLLOW, and only a tensorfs mount;
# issue 32, item 10). With the keeper stopped (SIGSTOP), the daemon is killed, the
# directory above the dead mount moved away, and the mount point's path made a symlink to
# another mount (a tmpfs); then the keeper gets SIGTERM with the daemon's death: it stops
# without starting another daemon, and its detach must leave that mount alone.
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
V=$T/victim
mkdir -p "$V" "$T/x"
mount -t tmpfs -o size=1m tfs-victim "$V" || { echo "not ok - cannot mount a tmpfs"; exit 1; }
echo here > "$V/file"
trap 'mountpoint -q "$V" && umount -l "$V"; mountpoint -q "$T/y/m" && umount -l "$T/y/m"; [ -n "$WATCHDOG" ] && kill "$WATCHDOG" 2>/dev/null' EXIT
M=$T/x/m
mount_tfs "$M" --backend host || exit 1
keeper=${MNT_PID[$M]}
d=$(daemon_pid "$M")
kill -STOP "$keeper"
kill -9 "$d"
# The daemon is gone once it is a zombie (its stopped parent does not reap it yet).
for _ in $(seq 400); do [ "$(ps -o stat= -p "$d" | cut -c1)" = Z ] && break; sleep 0.05; done
check "the daemon died" test "$(ps -o stat= -p "$d" | cut -c1)" = Z
check "the directory above the dead mount moves" mv "$T/x" "$T/y"
mkdir "$T/x"
ln -s "$V" "$M"
kill -TERM "$keeper"
kill -CONT "$keeper"
wait "$keeper"; rc=$?
unset "MNT_PID[$M]"
eq "the keeper stops with the daemon's status (killed: 137)" 137 "$rc"
check "without starting another daemon" bash -c "! grep -q 'starting it again' '$T/m.log'"
check "the mount the symlink leads to is still mounted" mountpoint -q "$V"
eq "and still serves its file" here "$(cat "$V/file" 2>&1)"
umount "$V"
umount -l "$T/y/m" 2>/dev/null
finish
