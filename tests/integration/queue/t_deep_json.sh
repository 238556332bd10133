# A command the JSON parser refuses (10,000 levels deep, truncated) is still answered when
# its id and reply can be read at the top level (issue 15, item 5), and the daemon keeps
# serving.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
jfield() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get('$2'))" "$1" 2>/dev/null || echo PARSE_ERROR; }
deep=$(python3 -c 'print("[" * 10000 + "]" * 10000)')
rcli lpush tensor_lifecycle "{\"op\":\"get\",\"id\":\"d1\",\"reply\":\"tq:deep\",\"x\":$deep}" >/dev/null
r=$(rcli brpop tq:deep 20 | tail -n 1)
eq "10,000-deep document: an error reply" "False d1" "$(jfield "$r" ok) $(jfield "$r" id)"
eq "it says why" EINVAL "$(jfield "$r" error)"
rcli lpush tensor_lifecycle "{\"id\":\"d2\",\"reply\":\"tq:deep\",\"x\":$deep,\"op\":\"get\"}" >/dev/null
r=$(rcli brpop tq:deep 20 | tail -n 1)
eq "id and reply before the deep value, op after: answered" d2 "$(jfield "$r" id)"
rcli lpush tensor_lifecycle '{"id":"d3","reply":"tq:deep","op":"crea' >/dev/null
r=$(rcli brpop tq:deep 20 | tail -n 1)
eq "a truncated document: answered" "EINVAL d3" "$(jfield "$r" error) $(jfield "$r" id)"
rcli lpush tensor_lifecycle "{\"id\":\"d4\",\"x\":$deep,\"reply\":\"tensorfs:dir:\"}" >/dev/null
r=$(qsend '{"op":"create","name":"after","dtype":"u8","shape":[1]}')
eq "the daemon keeps serving" True "$(jfield "$r" ok)"
eq "a salvaged reply key is checked like any: the root's record is untouched" hash "$(rcli type tensorfs:dir:)"
check "the root still works" stat "$M"
finish
