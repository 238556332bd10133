# Node n1's lease moves to another daemon (the first one stalled, its lease deleted, a new
# daemon of n1 started): a reader on n2 with the tensor open gets a clear error from the
# new owner, never the old daemon's bytes and never a hang; the old daemon, back, does not
# take the address record over and refuses to serve.
. "$(dirname "$0")/netlib.sh"
net_nodes -o net_timeout=5
printf 'ABCDEFGH' > "$A/x"
# The first read also makes n2's connection to n1 (the handshake): on a loaded machine,
# under ASan, that can outlast one timeout, so it is tried again on a new open.
got=
for _ in $(seq 20); do
	exec 3< "$B/x"
	got=$(dd bs=8 count=1 status=none <&3 2>/dev/null)
	[ "$got" = ABCDEFGH ] && break
	exec 3<&-
	sleep 0.5
done
eq "n2 reads n1's bytes through its open file" ABCDEFGH "$got"
rec1=$(redis-cli -s "$SOCK" get tensorfs:ucx:n1)
d=$(daemon_pid "$A")
kill -STOP "$d"
redis-cli -s "$SOCK" del tensorfs:alive:n1 tensorfs:ucx:n1 >/dev/null
C=$T/c
mount_tfs "$C" --node n1 --cluster-key "$KEY" -o net_timeout=5 || exit 1
check "the new daemon of n1 publishes its own address" soon sh -c "v=\$(redis-cli -s '$SOCK' get tensorfs:ucx:n1); [ -n \"\$v\" ] && [ \"\$v\" != '$rec1' ]"
rec2=$(redis-cli -s "$SOCK" get tensorfs:ucx:n1)
# The reader's cached address is a second old at the most; then it asks the new owner.
new_owner_refuses() {
	local e
	e=$(dd bs=8 count=1 status=none <&3 2>&1 >/dev/null) && return 1
	case $e in *"No such file"* | *"Stale file handle"*) return 0 ;; esac
	return 1
}
check "the open file's read: a clear error from the new owner" soon new_owner_refuses
kill -CONT "$d"
check "the old daemon says its lease is another's" soon grep -q "now held by another daemon" "$T/a.log"
check "the record stays the new daemon's" soon sh -c "grep -q 'no longer writes' '$T/a.log' && [ \"\$(redis-cli -s '$SOCK' get tensorfs:ucx:n1)\" = '$rec2' ]"
exec 3<&-
umount_tfs "$C"
finish
