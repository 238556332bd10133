# With the default private redis-server (no --redis), kill -9 of the daemon keeps the
# records too: the server outlives the daemon and the restarted daemon finds it again in
# its runtime directory (issue 16); unmount still stops it and removes the directory.
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
M=$T/m
mount_private "$M"
head -c 300000 /dev/urandom > "$M/x"
mkdir "$M/d"; chmod 0750 "$M/d"
sum=$(md5sum < "$M/x")
sync "$M"
d=$(daemon_pid "$M")
kill -9 "$d"
check "the mount serves again" serves_within 30 "$M"
check "a new daemon" bash -c "[ -n \"\$(pgrep -P ${MNT_PID[$M]} -x tensorfs)\" ] && [ \"\$(pgrep -P ${MNT_PID[$M]} -x tensorfs)\" != $d ]"
check "the same redis-server (pid $rpid) still runs" kill -0 "$rpid"
check "the new daemon uses it" grep -q "private redis-server (pid $rpid) of the run before" "$T/m.log"
eq "x kept its bytes" "$sum" "$(md5sum < "$M/x")"
eq "d kept its mode" 750 "$(stat -c %a "$M/d")"
eq "x's record is in that server" 300000 "$(redis-cli -s "$rsock" hget tensorfs:tensor:x bytes)"
umount_tfs "$M"
check "the private redis-server is stopped at unmount" bash -c "! kill -0 $rpid 2>/dev/null"
check "and its runtime directory removed" test ! -e "$(dirname "$rsock")"
finish
