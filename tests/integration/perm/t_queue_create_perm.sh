# A create through a per-user queue is made only where its sender may write, and the
# tensor is the sender's (issue 15, item 2).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/quser_lib.sh"
start_redis || exit 1
M=$T/m
quser_mount "$M" --node n1 || exit 1
mkdir "$M/ro" "$M/locked" "$M/locked/in" "$M/pub"
chmod 700 "$M/locked"; chmod 777 "$M/locked/in" "$M/pub"
r=$(usend '{"op":"create","name":"ro/x","dtype":"u8","shape":[1024]}')
eq "in root's 0755 directory: EACCES" EACCES "$(jfield "$r" error)"
r=$(usend '{"op":"create","name":"locked/in/x","dtype":"u8","shape":[1024]}')
eq "in a 0777 directory under root's 0700 one: EACCES" EACCES "$(jfield "$r" error)"
check "nothing was made" test ! -e "$M/ro/x" -a ! -e "$M/locked/in/x"
eq "no memory taken" 0 "$(used_bytes "$M")"
r=$(usend '{"op":"create","name":"pub/x","dtype":"u8","shape":[1024]}')
eq "in a 0777 directory: ok" True "$(jfield "$r" ok)"
eq "owned by the sender" "$QUID $QUID 644" "$(stat -c '%u %g %a' "$M/pub/x")"
r=$(qsend '{"op":"create","name":"ro/y","dtype":"u8","shape":[1]}')
eq "the shared queue acts as the daemon's user" "True 0" "$(jfield "$r" ok) $(stat -c %u "$M/ro/y")"
finish
