# The node lease is renewed by a thread of its own (fs/store/lease.c), which waits on
# nothing else of the daemon: a daemon whose other threads wait past the lease's 5 s
# lifetime keeps its node. Here the queue thread waits on a memory keeper stopped with
# SIGSTOP, as it waits on a keeper busy in a slow cudaMalloc or pinning a large
# preallocation: the lease stays, a second daemon of the same node is refused meanwhile,
# and the command is answered once the keeper runs again.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --backend host || exit 1
kpid=${MNT_PID[$M]}
# Straight to Redis: rcli first syncs the mount, which waits with the queue thread.
raw() { redis-cli -s "$SOCK" "$@"; }
kill -STOP "$kpid"
( raw lpush tensor_lifecycle '{"op":"create","name":"big","dtype":"u8","shape":[67108864],"id":"r1","reply":"tq:r1"}' >/dev/null
  raw brpop tq:r1 60 | tail -n 1 > "$T/reply" ) &
qpid=$!
# Past the lease's lifetime, the queue thread waiting all along.
sleep 7
check "the lease lives while the queue thread waits on the keeper" \
	test "$(raw pttl tensorfs:alive:n1)" -gt 0
check "the command is still waiting" test ! -s "$T/reply"
mkdir "$T/m2"
timeout 20 "$TFS" -f --redis "$URL" --log "$T/m2.log" --node n1 "$T/m2"; rc=$?
fusermount3 -uz "$T/m2" 2>/dev/null
eq "a second daemon of node n1 is refused meanwhile" 1 "$rc"
check "saying who holds the node" grep -qF "node n1 is held by another daemon (pid $kpid on host $(hostname))" "$T/m2.log"
kill -CONT "$kpid"
wait "$qpid"
eq "the command is answered once the keeper runs again" True "$(jfield "$(cat "$T/reply")" ok)"
check "the tensor is there" test "$(size_of "$M/big")" = 67108864
check "the daemon never lost its node" not grep -q "held by another daemon\|lease was gone" "$T/m.log"
umount_tfs "$M"
finish
