# What the promoted replica never got is written again from the daemon: the replica is cut
# off from the primary (its link killed while it is stopped), the daemon then creates
# tensors, makes an empty directory and removes a tensor, all acknowledged by the primary
# alone; the primary is killed and the replica promoted without them. The daemon sees the
# new primary's other run id and rewrites what it knows: the new tensors' records, the empty
# directory with its mode, and no record left of the removed tensor.
TEST_TIMEOUT=600
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/group.sh"
# The sentinels promote a replica whose link has been down for less than ten times
# down-after-milliseconds: 3 s gives the lost window 30 s, whatever the machine's load.
sentinel_group 3000 || exit 1
URL=$SURL
M=$T/m
mount_tfs "$M" --node n1 || exit 1
mkdir "$M/d"
echo before > "$M/d/gone"
echo kept > "$M/d/kept"
tfs_flush
replicated() { [ "$(redis-cli -p "$PORT_R" exists tensorfs:tensor:d/gone)" = 1 ]; }
check "the replica has the first records" waits_for 60 replicated
# The window: nothing of it reaches the replica.
kill -STOP "$PID_R"
redis-cli -p "$PORT_P" client kill type replica >/dev/null
for i in $(seq 20); do printf 'w%02d' "$i" > "$M/d/w$i"; done
mkdir -m 0750 "$M/empty"
rm "$M/d/gone"
tfs_flush
eq "the primary took the window's writes" 1 "$(redis-cli -p "$PORT_P" exists tensorfs:tensor:d/w20)"
kill -9 "$PID_P"; wait "$PID_P" 2>/dev/null
kill -CONT "$PID_R"
# Still a replica (the sentinels wait 3 s before they even call the primary down): what it
# holds is what it will be promoted with. Asked in one transaction with its role.
seen=$(printf 'MULTI\nROLE\nEXISTS tensorfs:tensor:d/w1 tensorfs:dir:empty\nEXEC\n' |
	redis-cli -p "$PORT_R" | tr '\n' ' ')
case "$seen" in
*slave*) eq "the replica lacks the window's records" 0 "$(echo "$seen" | awk '{print $NF}')" ;;
*) echo "# the replica was promoted before it could be looked at: $seen" ;;
esac
check "the sentinels promote the replica" wait_failover
rewritten() {
	[ "$(redis-cli -p "$PORT_R" exists $(for i in $(seq 20); do echo tensorfs:tensor:d/w$i; done))" = 20 ] &&
	[ "$(redis-cli -p "$PORT_R" hget tensorfs:dir:empty mode)" != "" ] &&
	[ "$(redis-cli -p "$PORT_R" exists tensorfs:tensor:d/gone)" = 0 ]
}
check "the daemon rewrites the window's records on the new primary" waits_for 180 rewritten
eq "the empty directory's mode came back" 750 "$(redis-cli -p "$PORT_R" hget tensorfs:dir:empty mode | sed 's/^0*//')"
eq "the empty directory is listed in the root" d "$(redis-cli -p "$PORT_R" hget tensorfs:dirents: empty)"
eq "the removed tensor's entry is gone" "" "$(redis-cli -p "$PORT_R" hget tensorfs:dirents:d gone)"
eq "a tensor of before the window kept" 1 "$(redis-cli -p "$PORT_R" exists tensorfs:tensor:d/kept)"
eq "the mount lists the window's tensors" 21 "$(ls "$M/d" | wc -l)"
eq "a window tensor reads its bytes" w07 "$(cat "$M/d/w7")"
check "the daemon logged the failover" grep -q "Redis failed over" "$T/m.log"
finish
