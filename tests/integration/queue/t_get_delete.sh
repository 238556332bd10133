# get adds a holder and a reference and replies with user.tensor.meta's fields; the
# holder's delete drops only its reference, the last delete removes the tensor.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
send '{"op":"create","name":"q1","dtype":"f32","shape":[2,3],"pid":1}' >/dev/null
sleep 600 & live=$!
r=$(send "{\"op\":\"get\",\"name\":\"q1\",\"pid\":$live,\"node\":\"n1\"}")
eq "get ok" True "$(jfield "$r" ok)"
eq "get raises refcount to 2" 2 "$(rcli hget tensorfs:tensor:q1 refcount)"
eq "get records the holder" 1 "$(rcli hget tensorfs:tensor:q1 holder:n1:$live)"
eq "xattr refcount agrees" 2 "$(xget "$M/q1" refcount)"
eq "get reply handle = xattr handle" "$(getfattr --only-values -n user.tensor.ipc_handle "$M/q1" | od -An -v -tx1 | tr -d ' \n')" "$(jfield "$r" ipc_handle)"
# The reply is written by hand (core/cmd.c), user.tensor.meta by tfs_meta_to_json: the
# same fields with the same values, so that neither drifts from the other.
eq "get reply = user.tensor.meta + id, ok, name" same "$(/usr/bin/python3 -c '
import json, sys
r, m = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for k in ("id", "ok"): r.pop(k)
m.setdefault("name", r["name"])   # user.tensor.meta names a VMM tensor only (docs/vmm.md)
print("same" if r == m else "reply %s meta %s" % (r, m))' "$r" "$(getfattr --only-values -n user.tensor.meta "$M/q1")" 2>&1)"
r=$(send "{\"op\":\"delete\",\"name\":\"q1\",\"pid\":$live,\"node\":\"n1\"}")
eq "delete by the holder ok" True "$(jfield "$r" ok)"
eq "holder's reference gone" 1 "$(rcli hget tensorfs:tensor:q1 refcount)"
eq "holder field gone" 0 "$(rcli hexists tensorfs:tensor:q1 holder:n1:$live)"
eq "tensor still there" 24 "$(size_of "$M/q1")"
r=$(send '{"op":"delete","name":"q1"}')
eq "delete of the last reference ok" True "$(jfield "$r" ok)"
check "tensor gone from the mount" test ! -e "$M/q1"
eq "hash deleted" 0 "$(rcli exists tensorfs:tensor:q1)"
r=$(send '{"op":"get","name":"q1","pid":1}')
eq "get of a missing tensor: ENOENT" ENOENT "$(jfield "$r" error)"
kill $live; wait $live 2>/dev/null
finish
