# The lifecycle queue (SPEC §8) driven with redis-cli, as any client would.
. "$(dirname "$0")/lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --max-bytes 64M || exit 1
cd "$T"

# Replies within 2 s: the daemon pops every 0.5 s at the most.
send() { qsend "$1" 2; }
jfield() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get('$2'))" "$1" 2>/dev/null || echo PARSE_ERROR; }

r=$(send '{"op":"create","name":"q1","dtype":"f32","shape":[2,3],"pid":1}')
eq "create ok" True "$(jfield "$r" ok)"
eq "create reply carries the id" r1 "$(jfield "$r" id)"
eq "create reply has bytes" 24 "$(jfield "$r" bytes)"
eq "create reply has a 128-hex-digit handle" 128 "$(jfield "$r" ipc_handle | tr -d '\n' | wc -c)"
eq "created tensor appears in the mount" 24 "$(size_of "$M/q1")"
eq "its shape" "[2,3]" "$(xget "$M/q1" shape)"
eq "its refcount is 1" 1 "$(rcli hget tensorfs:tensor:q1 refcount)"
eq "state ready" ready "$(rcli hget tensorfs:tensor:q1 state)"
r=$(send '{"op":"create","name":"q1","dtype":"f32","shape":[2,3]}')
eq "create of an existing name: EEXIST" EEXIST "$(jfield "$r" error)"

sleep 60 & live=$!
r=$(send "{\"op\":\"get\",\"name\":\"q1\",\"pid\":$live,\"node\":\"n1\"}")
eq "get ok" True "$(jfield "$r" ok)"
eq "get raises refcount to 2" 2 "$(rcli hget tensorfs:tensor:q1 refcount)"
eq "get records the holder" 1 "$(rcli hget tensorfs:tensor:q1 holder:n1:$live)"
eq "xattr refcount agrees" 2 "$(xget "$M/q1" refcount)"
eq "get reply handle = xattr handle" "$(getfattr --only-values -n user.tensor.ipc_handle "$M/q1" | od -An -v -tx1 | tr -d ' \n')" "$(jfield "$r" ipc_handle)"
# The reply is written by hand (lib/cmd.c), user.tensor.meta by tfs_meta_to_json: the
# same fields with the same values, so that neither drifts from the other.
eq "get reply = user.tensor.meta + id, ok, name" same "$(python3 -c '
import json, sys
r, m = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for k in ("id", "ok", "name"): r.pop(k)
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

# a holder that dies is reaped
rcli del tq:x >/dev/null
send '{"op":"create","name":"q2","dtype":"u8","shape":[10]}' >/dev/null
sleep 60 & doomed=$!
r=$(send "{\"op\":\"get\",\"name\":\"q2\",\"pid\":$doomed,\"node\":\"n1\"}")
eq "second holder recorded" 2 "$(rcli hget tensorfs:tensor:q2 refcount)"
kill $doomed; wait $doomed 2>/dev/null
for _ in $(seq 40); do [ "$(rcli hget tensorfs:tensor:q2 refcount)" = 1 ] && break; sleep 0.1; done
eq "dead holder reaped" 1 "$(rcli hget tensorfs:tensor:q2 refcount)"
check "reaping was logged" grep -q "holder pid $doomed is gone" "$T/m.log"
check "rm of a queue-created tensor" rm "$M/q2"
eq "its hash gone" 0 "$(rcli exists tensorfs:tensor:q2)"

# tensors made in the mount are visible to the queue
touch "$M/f"; setfattr -n user.tensor.dtype -v i64 "$M/f"; setfattr -n user.tensor.shape -v '[4]' "$M/f"
r=$(send "{\"op\":\"get\",\"name\":\"f\",\"pid\":$live}")
eq "get of a mount-made tensor" "i64 32" "$(jfield "$r" dtype) $(jfield "$r" bytes)"
send "{\"op\":\"delete\",\"name\":\"f\",\"pid\":$live}" >/dev/null
kill $live; wait $live 2>/dev/null

# bad commands: an error reply when a reply key can be read, a log line always
r=$(send '{"op":"create","name":"bad1","dtype":"f99","shape":[1]}')
eq "unknown dtype: EINVAL" EINVAL "$(jfield "$r" error)"
r=$(send '{"op":"explode","name":"x"}')
eq "unknown op: EINVAL" EINVAL "$(jfield "$r" error)"
check "unknown op message names it" bash -c "echo '$r' | grep -q explode"
r=$(send '{"op":"create","name":"bad2","dtype":"f32","shape":[-1]}')
eq "negative dim: EINVAL" EINVAL "$(jfield "$r" error)"
r=$(send '{"op":"create","name":"bad3","dtype":"f32","shape":[4294967296,4294967296,4]}')
eq "overflowing shape: EOVERFLOW" EOVERFLOW "$(jfield "$r" error)"
r=$(send '{"op":"create","name":"bad4","dtype":"f32","shape":[1024,1024,1024]}')
eq "over --max-bytes: ENOSPC" ENOSPC "$(jfield "$r" error)"
check "nothing half-made after ENOSPC" bash -c "[ ! -e '$M/bad4' ] && [ \"\$(rcli exists tensorfs:tensor:bad4)\" = 0 ]"
r=$(send '{"op":"create","name":"../etc","dtype":"f32","shape":[1]}')
eq "bad name: EINVAL" EINVAL "$(jfield "$r" error)"
r=$(send '{"op":"create","name":"nodir/x","dtype":"f32","shape":[1]}')
eq "missing parent: ENOENT" ENOENT "$(jfield "$r" error)"
rcli lpush tensor_lifecycle '{"op":"create", this is not json' >/dev/null
rcli lpush tensor_lifecycle '[1,2,3]' >/dev/null
rcli lpush tensor_lifecycle '{"op":"get","name":"x","reply":["not a string"]}' >/dev/null
r=$(send '{"op":"create","name":"after","dtype":"u8","shape":[3]}')
eq "daemon keeps serving after malformed JSON" True "$(jfield "$r" ok)"
check "malformed JSON logged" grep -q "malformed JSON" "$T/m.log"
check "queue drained" bash -c "[ \"\$(rcli llen tensor_lifecycle)\" = 0 ]"

# Commands popped together: the daemon claims the names of a batch's creates in one round
# trip, and a name that an earlier command of the batch uses is claimed in its turn. One
# LPUSH puts them all in the queue at once, in this order.
batch=()
bcmd() { batch+=("{${1},\"id\":\"b${#batch[@]}\",\"reply\":\"tq:b:${#batch[@]}\"}"); }
bcmd '"op":"create","name":"b1","dtype":"f32","shape":[4]'
bcmd '"op":"create","name":"b2","dtype":"f32","shape":[4]'
bcmd '"op":"create","name":"b1","dtype":"u8","shape":[1]'
bcmd '"op":"delete","name":"b2"'
bcmd '"op":"create","name":"b2","dtype":"u8","shape":[7]'
bcmd '"op":"create","name":"b3","dtype":"f32","shape":[1024,1024,1024]'
bcmd '"op":"create","name":"b3","dtype":"u8","shape":[5]'
bcmd '"op":"get","name":"b1","pid":1'
bcmd '"op":"create","name":"b4","dtype":"u8","shape":[2]'
rcli lpush tensor_lifecycle "${batch[@]}" >/dev/null
breply() { rcli brpop "tq:b:$1" 3 | tail -n 1; }
eq "batch: create b1" True "$(jfield "$(breply 0)" ok)"
eq "batch: create b2" True "$(jfield "$(breply 1)" ok)"
eq "batch: second create of b1: EEXIST" EEXIST "$(jfield "$(breply 2)" error)"
eq "batch: delete b2" True "$(jfield "$(breply 3)" ok)"
eq "batch: b2 made again after its delete" "True 7" "$(r=$(breply 4); echo "$(jfield "$r" ok) $(jfield "$r" bytes)")"
eq "batch: b3 over --max-bytes: ENOSPC" ENOSPC "$(jfield "$(breply 5)" error)"
eq "batch: b3 made after the ENOSPC gave its name back" "True 5" "$(r=$(breply 6); echo "$(jfield "$r" ok) $(jfield "$r" bytes)")"
eq "batch: get b1 sees the first create" "True 16 2" "$(r=$(breply 7); echo "$(jfield "$r" ok) $(jfield "$r" bytes) $(jfield "$r" refcount)")"
eq "batch: create b4" True "$(jfield "$(breply 8)" ok)"
eq "batch: sizes in the mount" "16 7 5 2" "$(stat -c %s "$M/b1" "$M/b2" "$M/b3" "$M/b4" | tr '\n' ' ' | sed 's/ $//')"
eq "batch: records" "2 1 1 1" "$(for n in b1 b2 b3 b4; do rcli hget tensorfs:tensor:$n refcount; done | tr '\n' ' ' | sed 's/ $//')"
eq "batch: directory entries" "t t t t" "$(for n in b1 b2 b3 b4; do rcli hget tensorfs:dirents: $n; done | tr '\n' ' ' | sed 's/ $//')"
check "reply keys expire" bash -c "t=\$(rcli ttl tq:reply:1); [ \"\$t\" = -2 ] || [ \"\$t\" -gt 0 ]"
cd /
finish
