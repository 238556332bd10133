# A per-user queue hold keeps its owner across a crash (issue 15): Redis keeps the owner's
# uid with the hold ("<count> <uid>"), and the daemon the keeper restarts after kill -9
# restores it, so another per-user sender still cannot drop the hold while its owner can.
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../perm/quser_lib.sh"
start_redis || exit 1
M=$T/m
BUID=1
quser_mount "$M" --node n1 --user-queues "$QUID,$BUID" || exit 1
BURL=$(cat "$(dirname "$QCRED")/$BUID.url") || exit 1
BUSER=$(echo "$BURL" | sed 's,^unix://,,; s,:.*,,')
BPASS=$(echo "$BURL" | sed 's,^unix://[^:]*:,,; s,@.*,,')
# bsend JSON: as usend, through uid 1's own queue (its identity is its ACL user)
bsend() {
	local n=$RANDOM$RANDOM$RANDOM
	local json=${1/\}/,\"id\":\"b$n\",\"reply\":\"tensor_lifecycle:u:$BUID:reply:$n\"\}}
	tfs_flush
	redis-cli --no-auth-warning -s "$SOCK" --user "$BUSER" --pass "$BPASS" lpush "tensor_lifecycle:u:$BUID" "$json" >/dev/null
	redis-cli --no-auth-warning -s "$SOCK" --user "$BUSER" --pass "$BPASS" brpop "tensor_lifecycle:u:$BUID:reply:$n" 20 | tail -n 1
}
touch "$M/t"
user_sleeper; apid=$UPID
r=$(usend "{\"op\":\"get\",\"name\":\"t\",\"pid\":$apid}"); eq "uid $QUID holds t" True "$(jfield "$r" ok)"
eq "Redis keeps the hold's owner" "1 $QUID" "$(rcli hget tensorfs:tensor:t holder:n1:$apid)"
r=$(bsend "{\"op\":\"delete\",\"name\":\"t\",\"pid\":$apid}"); eq "uid $BUID cannot drop it" ESRCH "$(jfield "$r" error)"

old=$(daemon_pid "$M"); lease=$(rcli get tensorfs:alive:n1)
kill -9 "$old"
for _ in $(seq 200); do new=$(daemon_pid "$M"); [ -n "$new" ] && [ "$new" != "$old" ] && break; sleep 0.1; done
check "the keeper started the daemon again" test -n "$new" -a "$new" != "$old"
check "which serves" serves_within 30 "$M"
eq "and took the node's lease over with the keeper's token" "$lease" "$(rcli get tensorfs:alive:n1)"
eq "the hold survived" 2 "$(xget "$M/t" refcount)"
r=$(bsend "{\"op\":\"delete\",\"name\":\"t\",\"pid\":$apid}"); eq "uid $BUID still cannot drop it" ESRCH "$(jfield "$r" error)"
eq "refcount still 2" 2 "$(xget "$M/t" refcount)"
r=$(usend "{\"op\":\"delete\",\"name\":\"t\",\"pid\":$apid}"); eq "its owner drops it" True "$(jfield "$r" ok)"
eq "refcount 1" 1 "$(xget "$M/t" refcount)"
eq "the holder field went" 0 "$(rcli hexists tensorfs:tensor:t holder:n1:$apid)"
kill "$apid"; wait "$apid" 2>/dev/null
finish
