# A Redis that comes back empty has no ACL users: the daemon makes them again, with the
# same passwords, so each user's credentials keep working (issue 15, item 2).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/quser_lib.sh"
start_redis || exit 1
M=$T/m
quser_mount "$M" --node n1 || exit 1
mkdir "$M/pub"; chmod 777 "$M/pub"
r=$(usend '{"op":"create","name":"pub/a","dtype":"u8","shape":[1]}'); eq "before the restart" True "$(jfield "$r" ok)"
stop_redis
start_redis || exit 1
chmod 777 "$SOCK"
ls "$M" >/dev/null 2>&1     # a metadata operation notices Redis is back
for _ in $(seq 200); do grep -q "Redis is back" "$T/m.log" && break; sleep 0.1; ls "$M" >/dev/null 2>&1; done
check "the daemon saw Redis come back" grep -q "Redis is back" "$T/m.log"
eq "the ACL user is there again" "u$QUID.tensor_lifecycle" "$(ucli acl whoami 2>&1)"
# (Directories are not rewritten after an empty restart: a tensor of root's at the root.)
touch "$M/t"; user_sleeper
r=$(usend "{\"op\":\"get\",\"name\":\"t\",\"pid\":$UPID}")
eq "the same credentials work" True "$(jfield "$r" ok)"
r=$(usend '{"op":"delete","name":"t"}')
eq "and act as the user (root's tensor in root's directory: EACCES)" EACCES "$(jfield "$r" error)"
kill $UPID; wait $UPID 2>/dev/null
finish
