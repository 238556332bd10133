# The requesting daemon stops (SIGSTOP) in the middle of a replication, while the owner
# sends its answers straight from the tensor's memory, which UCX then holds for as long as
# the requester takes nothing: the tensor can still be removed on the owner (its memory is
# freed once UCX lets go of it) and the owner's mount goes on; the requester, let go again,
# fails the copy at its deadline and removes what it made, and the next copy goes through.
. "$(dirname "$0")/netlib.sh"
net_nodes -o net_timeout=2
mkdir "$A/m"
rand_tensor "$A/m/w" $((256 * 1024 * 1024))
da=$(daemon_pid "$A") db=$(daemon_pid "$B")
"$CTL" cp -r -q "$B/m" "$B/r" 2>"$T/cp.err" &
cpid=$!
# Stopped while the owner is sending: one of its connections has bytes not yet taken.
sending() { ss -tnpH state established 2>/dev/null | grep "pid=$da," | awk '$2 > 0 { f = 1 } END { exit !f }'; }
stopped=
for _ in $(seq 1200); do
	kill -0 "$cpid" 2>/dev/null || break
	if sending; then kill -STOP "$db"; stopped=1; break; fi
	sleep 0.05
done
if [ -z "$stopped" ]; then
	wait "$cpid"
	echo "skip - the copy was over before the owner was seen sending (rc $?)"
	finish
	exit
fi
ok "the requester stopped while the owner sends"
sleep 5    # past the requester's deadline: nothing at the owner waits for it
check "the source can be removed on the owner meanwhile" timeout 60 rm "$A/m/w"
check "the owner's mount still serves" serves_within 20 "$A"
kill -CONT "$db"
wait "$cpid"
rc=$?
if [ "$rc" != 0 ]; then ok "the copy fails (rc $rc)"; else nok "the copy succeeded"; fi
gone "$B/r" "the failed copy"
eq "the owner's daemon lives on" "$da" "$(daemon_pid "$A")"
eq "the requester's daemon lives on" "$db" "$(daemon_pid "$B")"
rand_tensor "$A/m/v" $((3 * 1024 * 1024))
check "a new copy goes through" "$CTL" cp -q "$B/m/v" "$B/v"
check "  its bytes" cmp "$T/v.src" "$B/v"
finish
