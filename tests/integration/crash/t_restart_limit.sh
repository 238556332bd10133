# No restart limit frees memory (issue 32): a daemon that crashes in a loop is started
# again for as long as its keeper lives, after a back-off that doubles from the second
# restart in a row (0, 0.1, 0.2, 0.4 ... s, up to --restart-delay-max, 30 s); --restarts N
# is obsolete and ignored. Eight kill -9s in a row, past the old limit: every tensor keeps
# its bytes. Then the keeper, stopped by SIGTERM while it waits out a back-off (no daemon
# runs), frees the memory, detaches the dead mount and exits 0: the admin's stop is the
# only other way memory goes.
EXPECT_RESTARTS=1
TEST_TIMEOUT=300
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --restarts 2 || exit 1
mkdir "$M/d"
for i in $(seq 0 9); do head -c $((i * 50000 + 1)) /dev/urandom > "$M/d/t$i"; done
sums() { (cd "$M/d" && md5sum t*) 2>&1; }
before=$(sums)
keeper=${MNT_PID[$M]}
check "--restarts is reported obsolete" grep -q "restarts is obsolete" "$T/m.log"
served=0
for c in $(seq 8); do
	kill9_and_serve "$M" || { nok "crash $c: no daemon served again within 30 s"; break; }
	served=$((served + 1))
done
eq "8 crashes in a row: the keeper started the daemon again each time" 8 "$served"
check "the keeper still runs" kill -0 "$keeper"
eq "every tensor kept its bytes" "$before" "$(sums)"
check "the restarts waited out a doubling back-off" \
	grep -q "died of signal 9: starting it again in 1600 ms" "$T/m.log"
# The next restart waits 12.8 s: the keeper is stopped meanwhile.
d=$(daemon_pid "$M")
kill -9 "$d"
waiting() { grep -q "starting it again in 12800 ms" "$T/m.log" && [ -z "$(daemon_pid "$M")" ]; }
for _ in $(seq 400); do waiting && break; sleep 0.05; done
check "after the ninth crash the keeper waits 12.8 s, no daemon running" waiting
kill -TERM "$keeper"
for _ in $(seq 400); do kill -0 "$keeper" 2>/dev/null || break; sleep 0.05; done
check "SIGTERM while no daemon runs stops the keeper" bash -c "! kill -0 $keeper 2>/dev/null"
wait "$keeper"; rc=$?
unset "MNT_PID[$M]"
eq "it exits 0" 0 "$rc"
check "and says why" grep -q "keeper: stopped by signal 15 while no daemon runs" "$T/m.log"
check "the dead mount is detached" bash -c "! mountpoint -q '$M'"
eq "the memory is freed" "" "$(ls /dev/shm | grep "^tensorfs\.$keeper\." || true)"
finish
