# A daemon that crashes in a loop is not restarted for ever: past --restarts crashes in a
# minute the keeper says so in the log, frees the memory, detaches the dead mount and exits.
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --restarts 2 || exit 1
head -c 100000 /dev/urandom > "$M/x"
keeper=${MNT_PID[$M]}
for c in 1 2 3; do
	d=$(daemon_pid "$M")
	[ -n "$d" ] || break
	kill -9 "$d"
	for _ in $(seq 200); do
		d2=$(daemon_pid "$M")
		{ [ -n "$d2" ] && [ "$d2" != "$d" ] && stat -f "$M" >/dev/null 2>&1; } && break
		kill -0 "$keeper" 2>/dev/null || break
		sleep 0.05
	done
done
wait "$keeper"; rc=$?
unset "MNT_PID[$M]"
eq "the keeper gives up after the third crash and exits 1" 1 "$rc"
check "and says why" grep -q "not restarting it" "$T/m.log"
check "the dead mount is detached" bash -c "! mountpoint -q '$M'"
eq "the memory is freed" "" "$(ls /dev/shm | grep "^tensorfs\.$keeper\." || true)"
finish
