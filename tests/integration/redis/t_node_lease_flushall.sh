# A Redis emptied under a running daemon (FLUSHALL) loses the node lease with everything
# else: the daemon takes it again (it is free) before it rewrites the node's records, so a
# second daemon of the same node is still refused afterwards.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
echo data > "$M/a"
ours=$(rcli get tensorfs:alive:n1)
rcli flushall >/dev/null
for _ in $(seq 400); do [ "$(redis-cli -s "$SOCK" get tensorfs:alive:n1)" = "$ours" ] && break; sleep 0.05; done
eq "the lease is taken again" "$ours" "$(redis-cli -s "$SOCK" get tensorfs:alive:n1)"
check "the daemon says why" grep -q "the lease was gone from Redis" "$T/m.log"
for _ in $(seq 400); do [ "$(redis-cli -s "$SOCK" hget tensorfs:tensor:a node)" = n1 ] && break; sleep 0.05; done
eq "the node's records are rewritten" n1 "$(rcli hget tensorfs:tensor:a node)"
mkdir "$T/m2"
timeout 20 "$TFS" -f --redis "$URL" --log "$T/m2.log" --node n1 "$T/m2"; rc=$?
fusermount3 -uz "$T/m2" 2>/dev/null
eq "a second daemon of n1 is still refused" 1 "$rc"
eq "the first one's record is intact" n1 "$(rcli hget tensorfs:tensor:a node)"
finish
