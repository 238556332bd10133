# kill -9 of the memory keeper itself (issue 32, item 10; issue 36): the daemon keeps
# serving what it has, and since it holds a descriptor of every object too (two holders,
# fs/mem/keeper/handover.h) it starts a new keeper and hands it them all, instead of
# serving memory nobody would hold after its own death. So the objects stay in /dev/shm
# under their names (a new process still opens them); a tensor removed then has its object
# removed by the new keeper; the unmount ends the daemon and the new keeper, which removes
# the rest, the dead keeper's directory included. (Until issue 36 the objects outlived the
# keeper only in the daemon, which removed them itself.)
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/holders.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --backend host || exit 1
head -c 100000 /dev/urandom > "$M/a"
head -c 100000 /dev/urandom > "$M/b"
sum=$(md5sum < "$M/a")
shm() { echo "/dev/shm$(xget "$1" ipc_handle | tail -c +9 | tr -d '\0')"; }
sb=$(shm "$M/b")
check "b's object is in /dev/shm" test -f "$sb"
keeper=${MNT_PID[$M]}
d=$(daemon_pid "$M")
check "a new keeper takes the objects over after the keeper's SIGKILL" kill_keeper "$M"
k2=$(keeper_of "$M")
check "it is another process ($k2, was $keeper)" test -n "$k2" -a "$k2" != "$keeper"
eq "the daemon still serves a" "$sum" "$(md5sum < "$M/a")"
client_tools
eq "a new process opens a (tfs_open) and reads its bytes" \
	"$(od -An -v -tx1 < "$M/a" | tr -d ' \n' | md5sum)" "$("$TOOL" read "$M/a" 0 100000 | head -1 | tr -d '\n' | md5sum)"
rm "$M/b"
check "b's object is gone from /dev/shm once b is removed" test ! -e "$sb"
fusermount3 -u "$M"
for _ in $(seq 400); do kill -0 "$d" 2>/dev/null || kill -0 "$k2" 2>/dev/null || break; sleep 0.05; done
check "the daemon ends at the unmount" bash -c "! kill -0 $d 2>/dev/null"
check "the new keeper ends with it" bash -c "! kill -0 $k2 2>/dev/null"
eq "nothing of either keeper is left in /dev/shm" "" "$(ls /dev/shm | grep "^tensorfs\.\($keeper\|$k2\)\." || true)"
finish
