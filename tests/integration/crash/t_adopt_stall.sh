# A Redis failure in the middle of adoption frees nothing (issue 32, item 3): 3000 tensors,
# kill -9 of the daemon, and the restarted daemon's record walk fails: at its first SCAN
# (SCAN refused by an ACL), at its first HGETALL (an error reply is no verdict on the
# record), and then Redis stalled (SIGSTOP) as the restarted daemon starts. A walk that did
# not end frees no memory; the start fails and is retried; once Redis answers, every
# tensor and its bytes are back.
EXPECT_RESTARTS=1
TEST_TIMEOUT=400
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --restart-delay-max 2 || exit 1
mkdir "$M/d"
/usr/bin/python3 -c 'import os, sys
for i in range(3000):
    with open("%s/t%d" % (sys.argv[1], i), "wb") as f: f.write(b"%d " % i + os.urandom(100 + i % 200))' "$M/d"
sums() { (cd "$M/d" && ls | sort | xargs md5sum) 2>&1 | md5sum; }
count() { ls "$M/d" 2>/dev/null | wc -l; }
before=$(sums)
eq "3000 tensors" 3000 "$(count)"
tfs_flush
serving() { mountpoint -q "$M" && stat -f "$M" >/dev/null 2>&1 && [ -n "$(daemon_pid "$M")" ] &&
	    [ "$(count)" = 3000 ]; }
failed_walks() { grep -c "cannot adopt the tensors of this node" "$T/m.log"; }
# phase DESC ACL-RULE: the walk fails while Redis refuses the command, then succeeds
phase() {
	local n0
	n0=$(failed_walks)
	redis-cli -s "$SOCK" ACL SETUSER default "$2" >/dev/null
	kill -9 "$(daemon_pid "$M")"
	for _ in $(seq 600); do [ "$(failed_walks)" -ge $((n0 + 2)) ] && break; sleep 0.05; done
	check "$1: the restarts' adoption fails" test "$(failed_walks)" -ge $((n0 + 2))
	eq "$1: no memory freed meanwhile" 0 "$(grep -c "no record names it" "$T/m.log")"
	redis-cli -s "$SOCK" ACL SETUSER default "${2/-/+}" >/dev/null
	for _ in $(seq 600); do serving && break; sleep 0.05; done
	check "$1: then a daemon serves the 3000 tensors" serving
	eq "$1: every tensor kept its bytes" "$before" "$(sums)"
}
phase "SCAN refused" -scan
phase "HGETALL refused" -hgetall
# A stall: Redis stopped as the restarted daemon starts (its "mounted beneath" line), for
# 3 s, longer than the daemon's 1 s Redis timeout.
n0=$(grep -c "mounted beneath" "$T/m.log")
w0=$(failed_walks)
kill -9 "$(daemon_pid "$M")"
for _ in $(seq 2000); do [ "$(grep -c "mounted beneath" "$T/m.log")" -gt "$n0" ] && break; sleep 0.005; done
kill -STOP "$REDIS_PID"
sleep 3
kill -CONT "$REDIS_PID"
for _ in $(seq 600); do serving && break; sleep 0.05; done
check "stall: then a daemon serves the 3000 tensors" serving
eq "stall: every tensor kept its bytes" "$before" "$(sums)"
eq "stall: no memory freed" 0 "$(grep -c "no record names it" "$T/m.log")"
echo "    # the stall made $(($(failed_walks) - w0)) adoption walk(s) fail"
finish
