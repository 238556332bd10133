# The keeper stops the private redis-server through a pidfd the daemon hands it, not by
# the pid in the server's pid file (issue 32, item 10): stopped by SIGTERM while it waits
# out a back-off (no daemon runs), it stops the server and leaves alone the process whose
# pid a stale or altered pid file names.
EXPECT_RESTARTS=1
TEST_TIMEOUT=240
. "$(dirname "$0")/../lib.sh"
M=$T/m
mount_private "$M"
keeper=${MNT_PID[$M]}
rundir=$(dirname "$rsock")
head -c 4096 /dev/urandom > "$M/x"
sync "$M"
# Six crashes in a row: the seventh restart waits 3.2 s.
for c in $(seq 6); do
	kill9_and_serve "$M" || { nok "crash $c: no daemon served again"; break; }
done
sleep 600 & decoy=$!
echo "$decoy" > "$rundir/redis.pid"
kill -9 "$(daemon_pid "$M")"
waiting() { grep -q "starting it again in 3200 ms" "$T/m.log" && [ -z "$(daemon_pid "$M")" ]; }
for _ in $(seq 400); do waiting && break; sleep 0.05; done
check "the keeper waits out a back-off, no daemon running" waiting
kill -TERM "$keeper"
for _ in $(seq 400); do kill -0 "$keeper" 2>/dev/null || break; sleep 0.05; done
check "SIGTERM stops the keeper" bash -c "! kill -0 $keeper 2>/dev/null"
wait "$keeper"
unset "MNT_PID[$M]"
gone() { ! kill -0 "$rpid" 2>/dev/null; }
for _ in $(seq 400); do gone && break; sleep 0.05; done
check "the private redis-server (pid $rpid) is stopped" gone
check "the process the pid file names instead is left alone" kill -0 "$decoy"
kill "$decoy" 2>/dev/null; wait "$decoy" 2>/dev/null
kill "$rpid" 2>/dev/null
rm -rf "$rundir"
finish
