# kill -9 of the memory keeper itself (issue 32, item 10): the daemon keeps serving what
# it has; a tensor removed then has its shared-memory object removed by the daemon (the
# keeper that would have is gone), not left in /dev/shm with its bytes until a later
# mount sweeps it; the unmount removes the rest.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --backend host || exit 1
head -c 100000 /dev/urandom > "$M/a"
head -c 100000 /dev/urandom > "$M/b"
sum=$(md5sum < "$M/a")
shm() { echo "/dev/shm$(xget "$1" ipc_handle | tail -c +9 | tr -d '\0')"; }
sa=$(shm "$M/a"); sb=$(shm "$M/b")
check "b's object is in /dev/shm" test -f "$sb"
keeper=${MNT_PID[$M]}
d=$(daemon_pid "$M")
kill -9 "$keeper"
wait "$keeper" 2>/dev/null
unset "MNT_PID[$M]"
eq "the daemon still serves a" "$sum" "$(md5sum < "$M/a")"
rm "$M/b"
check "b's object is gone from /dev/shm once b is removed" test ! -e "$sb"
check "a's is still there" test -f "$sa"
fusermount3 -u "$M"
for _ in $(seq 400); do kill -0 "$d" 2>/dev/null || break; sleep 0.05; done
check "the daemon ends at the unmount" bash -c "! kill -0 $d 2>/dev/null"
eq "nothing of the keeper is left in /dev/shm" "" "$(ls /dev/shm | grep "^tensorfs\.$keeper\." || true)"
finish
