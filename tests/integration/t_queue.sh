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
check "reply keys expire" bash -c "t=\$(rcli ttl tq:reply:1); [ \"\$t\" = -2 ] || [ \"\$t\" -gt 0 ]"
cd /
finish
