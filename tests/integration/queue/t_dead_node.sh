# A command for a node that is not alive is answered with EHOSTDOWN (issue 15, item 5):
# never pushed onto a list nobody pops. Each daemon keeps <prefix>:alive:<node> with a TTL.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
jfield() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get('$2'))" "$1" 2>/dev/null || echo PARSE_ERROR; }
for _ in $(seq 200); do [ "$(rcli exists tensorfs:alive:n1)" = 1 ] && break; sleep 0.1; done
eq "this node's registry key" 1 "$(rcli exists tensorfs:alive:n1)"
check "with a TTL" test "$(rcli ttl tensorfs:alive:n1)" -gt 0
r=$(qsend '{"op":"create","name":"x","dtype":"u8","shape":[4],"node":"ghost"}')
eq "create on a node that does not exist: EHOSTDOWN" EHOSTDOWN "$(jfield "$r" error)"
eq "no list for it" 0 "$(rcli exists '{tensor_lifecycle}:node:ghost')"
# A tensor record of a node that died (its key expired).
rcli hset tensorfs:tensor:orphan dtype u8 shape '[1]' bytes 1 device 0 node ghost backend host \
	mode 0644 uid 0 gid 0 ipc_offset 0 refcount 1 state ready ctime 1 mtime 1 \
	ipc_handle "$(head -c 64 /dev/zero | tr "\\0" x)" >/dev/null
rcli hset tensorfs:dirents: orphan t >/dev/null
r=$(qsend '{"op":"get","name":"orphan","pid":1}')
eq "get of a dead node's tensor: EHOSTDOWN" EHOSTDOWN "$(jfield "$r" error)"
eq "still no list" 0 "$(rcli exists '{tensor_lifecycle}:node:ghost')"
r=$(qsend '{"op":"create","name":"y","dtype":"u8","shape":[4],"node":"n1"}')
eq "its own node is alive" True "$(jfield "$r" ok)"
finish
