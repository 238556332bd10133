# One user's flood does not starve another's queue (issue 15, item 2): the daemon takes
# the per-user lists in turn, so a command of user B is answered while thousands of user
# A's still wait.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
chmod 755 "$T"; chmod 777 "$SOCK"
mount_tfs "$M" --node n1 --user-queues 65534,12345 || exit 1
dir=$(grep -o 'credentials in [^ ]*/<uid>.url' "$T/m.log" | head -1 | sed 's/credentials in //; s,/<uid>.url,,')
cred() { sed 's,^unix://,,; s,@.*,,' "$dir/$1.url"; }   # USER:PASS
IFS=: read -r ua pa <<< "$(cred 65534)"
IFS=: read -r ub pb <<< "$(cred 12345)"
check "a uid without a name gets its queue too" test -s "$dir/12345.url"
eq "owned by it" 12345 "$(stat -c %u "$dir/12345.url")"
# A's flood: 20,000 gets of a missing name, pushed in one pipe, then B's one command,
# both while the daemon is stopped (SIGSTOP): how fast the pipe goes against the daemon
# then decides nothing.
d=$(daemon_pid "$M")
kill -STOP "$d"
/usr/bin/python3 -c '
import sys
for i in range(20000):
    j = "{\"op\":\"get\",\"name\":\"none\",\"pid\":1,\"id\":\"a%d\",\"reply\":\"tensor_lifecycle:u:65534:reply:a\"}" % i
    sys.stdout.write("*3\r\n$5\r\nLPUSH\r\n$%d\r\ntensor_lifecycle:u:65534\r\n$%d\r\n%s\r\n" % (len("tensor_lifecycle:u:65534"), len(j), j))
' | redis-cli --no-auth-warning -s "$SOCK" --user "$ua" --pass "$pa" --pipe >/dev/null
redis-cli --no-auth-warning -s "$SOCK" --user "$ub" --pass "$pb" lpush tensor_lifecycle:u:12345 \
	'{"op":"get","name":"none","pid":1,"id":"b","reply":"tensor_lifecycle:u:12345:reply:b"}' >/dev/null
kill -CONT "$d"
r=$(redis-cli --no-auth-warning -s "$SOCK" --user "$ub" --pass "$pb" brpop tensor_lifecycle:u:12345:reply:b 30 | tail -n 1)
check "B is answered" sh -c "echo '$r' | grep -q '\"id\":\"b\"'"
# Taken in turn: B's command is among the first two takes (64 commands each), while
# thousands of A's wait. (The daemon drains the rest within a second or two, so what is
# left when this shell gets to look is no measure.)
pos=$(grep "queue: none id=" "$T/m.log" | grep -n "id=b:" | cut -d: -f1)
check "B served after at most 128 of A's 20,000 ($((pos - 1)))" test "$pos" -le 129
for _ in $(seq 300); do [ "$(rcli llen tensor_lifecycle:u:65534:reply:a)" = 20000 ] && break; sleep 0.1; done
eq "then A's flood is served" 20000 "$(rcli llen tensor_lifecycle:u:65534:reply:a)"
finish
