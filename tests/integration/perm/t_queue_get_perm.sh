# A get through a per-user queue gives only what its sender could read through the mount
# (issue 15, item 2): not a 0600 tensor of root's, not a 0644 one in a 0700 directory, and
# only for a pid of the sender's own.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/quser_lib.sh"
start_redis || exit 1
M=$T/m
quser_mount "$M" --node n1 || exit 1
touch "$M/secret" "$M/open"; chmod 600 "$M/secret"
mkdir "$M/private"; chmod 700 "$M/private"; touch "$M/private/w"
user_sleeper; upid=$UPID
sleep 600 & rpid=$!
r=$(usend "{\"op\":\"get\",\"name\":\"secret\",\"pid\":$upid}")
eq "root's 0600 tensor: EACCES" EACCES "$(jfield "$r" error)"
check "no handle in the reply" sh -c "! echo '$r' | grep -q ipc_handle"
r=$(usend "{\"op\":\"get\",\"name\":\"private/w\",\"pid\":$upid}")
eq "a 0644 tensor in root's 0700 directory: EACCES" EACCES "$(jfield "$r" error)"
r=$(usend "{\"op\":\"get\",\"name\":\"private/none\",\"pid\":$upid}")
eq "a missing name under it: EACCES too, as through the mount (not ENOENT)" EACCES "$(jfield "$r" error)"
r=$(usend '{"op":"create","name":"private/nodir/x","dtype":"u8","shape":[1]}')
eq "a create under a missing directory there: EACCES" EACCES "$(jfield "$r" error)"
r=$(usend "{\"op\":\"get\",\"name\":\"none\",\"pid\":$upid}")
eq "a missing name where it may search: ENOENT" ENOENT "$(jfield "$r" error)"
eq "neither got a reference" "1 1" "$(xget "$M/secret" refcount) $(xget "$M/private/w" refcount)"
r=$(usend "{\"op\":\"get\",\"name\":\"open\",\"pid\":$rpid}")
eq "a get naming root's process: EPERM" EPERM "$(jfield "$r" error)"
r=$(usend "{\"op\":\"get\",\"name\":\"open\",\"pid\":$upid,\"node\":\"elsewhere\"}")
eq "a get naming another node's process: EPERM" EPERM "$(jfield "$r" error)"
r=$(usend "{\"op\":\"get\",\"name\":\"open\",\"pid\":$upid}")
eq "a readable tensor, for its own process: ok" True "$(jfield "$r" ok)"
eq "held once" 2 "$(xget "$M/open" refcount)"
kill $upid $rpid; wait $upid $rpid 2>/dev/null
for _ in $(seq 200); do [ "$(xget "$M/open" refcount)" = 1 ] && break; sleep 0.1; done
eq "the hold goes with the process" 1 "$(xget "$M/open" refcount)"
finish
