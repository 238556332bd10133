# Two daemons (two nodes) with per-user queues on one Redis: each adds its own password to
# the user's ACL user, so both credentials files work, and each takes only its own back at
# unmount (issue 15, item 2).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/quser_lib.sh"
start_redis || exit 1
quser_mount "$T/m1" --node n1 || exit 1
u1=$QUSER p1=$QPASS
quser_mount "$T/m2" --node n2 || exit 1
u2=$QUSER p2=$QPASS
eq "one ACL user for the uid" "$u1" "$u2"
pw() { as_user redis-cli --no-auth-warning -s "$SOCK" --user "$1" --pass "$2" ping 2>&1; }
eq "node 1's credentials work after node 2 started" PONG "$(pw "$u1" "$p1")"
eq "node 2's too" PONG "$(pw "$u2" "$p2")"
umount_tfs "$T/m2"
check "node 2's password is gone with it" sh -c "pw() { redis-cli --no-auth-warning -s '$SOCK' --user '$u2' --pass '$p2' ping 2>&1; }; pw | grep -q WRONGPASS"
eq "node 1's still works" PONG "$(pw "$u1" "$p1")"
QUSER=$u1 QPASS=$p1
r=$(usend '{"op":"get","name":"none","pid":1}')
eq "and its queue is served" ENOENT "$(jfield "$r" error)"
finish
