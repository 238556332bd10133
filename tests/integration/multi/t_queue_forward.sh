# The queue names a node: a create naming n2 is made by n2, and a get of n2's tensor is
# forwarded to n2, which counts the holder.
. "$(dirname "$0")/../lib.sh"
two_nodes
r=$(qsend '{"op":"create","name":"qn2","dtype":"f16","shape":[8],"node":"n2"}')
check "queue create naming n2 is made by n2" grep -q '"node":"n2"' <<< "$r"
eq "record node n2" n2 "$(rcli hget tensorfs:tensor:qn2 node)"
eq "n2 reads its bytes" 16 "$(cat "$B/qn2" | wc -c)"
sleep 600 & live=$!
r=$(qsend "{\"op\":\"get\",\"name\":\"qn2\",\"pid\":$live,\"node\":\"n2\"}")
check "get of an n2 tensor answered (forwarded to n2)" grep -q '"ok":true' <<< "$r"
eq "n2 counted the holder" 2 "$(rcli hget tensorfs:tensor:qn2 refcount)"
kill $live; wait $live 2>/dev/null
finish
