# Background, no --redis: the daemon forks, starts its own redis-server on a socket (no
# TCP port), mounts; fusermount3 -u stops the daemon and that redis-server and removes
# its runtime directory.
. "$(dirname "$0")/../lib.sh"
cd "$T"
B=$T/bg
mkdir -p "$B"
start_bg() { "$TFS" --log "$T/bg.log" "$B" && mountpoint -q "$B"; }
echo_cat() { echo hi > "$B/a" && [ "$(cat "$B/a")" = hi ]; }
gone_pid() { ! kill -0 "$1" 2>/dev/null; }
check "background start returns 0 with the mount up" start_bg
sock=$(grep -o "private redis-server (pid [0-9]*) at [^ ]*" "$T/bg.log" | awk '{print $NF}')
rpid=$(grep -o "private redis-server (pid [0-9]*)" "$T/bg.log" | grep -o "[0-9]*")
check "private redis-server is logged with its socket" test -S "$sock"
check "tensors work on the private Redis" echo_cat
eq "its record is in the private Redis" 3 "$(tfs_flush; redis-cli -s "$sock" hget tensorfs:tensor:a bytes)"
eq "private Redis listens on no TCP port" 0 "$(redis-cli -s "$sock" config get port | tail -1)"
dpid=$(pgrep -f "^$TFS --log $T/bg.log" | head -1)
fusermount3 -u "$B"
for _ in $(seq 400); do kill -0 "$dpid" 2>/dev/null || break; sleep 0.05; done
check "fusermount3 -u: the daemon exits" gone_pid "$dpid"
for _ in $(seq 400); do kill -0 "$rpid" 2>/dev/null || break; sleep 0.05; done
check "fusermount3 -u: the private redis-server is stopped" gone_pid "$rpid"
check "its runtime directory is removed" test ! -e "$(dirname "$sock")"
finish
