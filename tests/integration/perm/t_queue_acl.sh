# A per-user queue's identity comes from Redis (issue 15, item 2): the credentials file
# is the user's alone, its ACL user may push to its own list and read its own replies and
# nothing else, and a reply key outside its own is never answered.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/quser_lib.sh"
start_redis || exit 1
M=$T/m
quser_mount "$M" --node n1 || exit 1
eq "credentials file: mode 0600, owned by the user" "600 $QUID" "$(stat -c '%a %u' "$QCRED")"
eq "its directory: 0711" 711 "$(stat -c '%a' "$(dirname "$QCRED")")"
check_err "root's other users cannot read it" "Permission denied" setpriv --reuid=1 --regid=1 --clear-groups cat "$QCRED"
eq "the ACL user is who Redis says" "u$QUID.tensor_lifecycle" "$(ucli acl whoami)"
# redis-cli exits 0 on an error reply: the reply is what tells.
nop() { "$@" 2>&1 | grep -q NOPERM; }
check "it may not push to the shared queue" nop ucli lpush tensor_lifecycle '{"op":"get","name":"x","pid":1}'
check "nor read the daemon's records" nop ucli hgetall tensorfs:dir:
check "nor push to a node's list" nop ucli lpush '{tensor_lifecycle}:node:n1' '{"op":"delete","name":"x"}'
check "nor expire another key" nop ucli expire tensorfs:dir: 1
r=$(usend '{"op":"create","name":"nope","dtype":"u8","shape":[1]}')
eq "it is served on its own list (root's root dir: EACCES)" EACCES "$(jfield "$r" error)"
# A reply key aimed elsewhere: not answered, and not made.
ucli lpush "$QLIST" '{"op":"get","name":"x","pid":1,"id":"a","reply":"tensor_lifecycle:u:0:reply:1"}' >/dev/null
ucli lpush "$QLIST" '{"op":"get","name":"x","pid":1,"id":"b","reply":"mine"}' >/dev/null
r=$(usend '{"op":"get","name":"x","pid":1}')
eq "the command behind them is answered" ENOENT "$(jfield "$r" error)"
eq "no reply on another user's reply key" 0 "$(rcli exists tensor_lifecycle:u:0:reply:1)"
eq "no reply on a key outside its prefix" 0 "$(rcli exists mine)"
r=$(qsend '{"op":"get","name":"x","pid":1,"reply":"tensor_lifecycle:u:65534"}' 1)
eq "a trusted sender's reply never lands on a user's list" 0 "$(rcli llen $QLIST)"
finish
