# A delete naming a pid drops that holder's reference and nothing else: a retry, a second
# delete or a delete after the hold was reaped must not remove the name for everyone
# (issue 15, item 4). Only a delete without pid drops the name.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
jfield() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get('$2'))" "$1" 2>/dev/null || echo PARSE_ERROR; }
sleep 600 & a=$!
sleep 600 & b=$!
r=$(qsend '{"op":"create","name":"x","dtype":"u8","shape":[4]}'); eq "create" True "$(jfield "$r" ok)"
r=$(qsend "{\"op\":\"get\",\"name\":\"x\",\"pid\":$a}"); eq "get by a" True "$(jfield "$r" ok)"
r=$(qsend "{\"op\":\"delete\",\"name\":\"x\",\"pid\":$b}")
eq "delete by b, who holds nothing: ESRCH" ESRCH "$(jfield "$r" error)"
check "x is still there" test -e "$M/x"
eq "its refcount is still 2" 2 "$(xget "$M/x" refcount)"
r=$(qsend "{\"op\":\"delete\",\"name\":\"x\",\"pid\":$a}"); eq "delete by a" True "$(jfield "$r" ok)"
r=$(qsend "{\"op\":\"delete\",\"name\":\"x\",\"pid\":$a}")
eq "a second delete by a: ESRCH" ESRCH "$(jfield "$r" error)"
check "x is still there after the retry" test -e "$M/x"
r=$(qsend '{"op":"delete","name":"x"}'); eq "a delete without pid drops the name" True "$(jfield "$r" ok)"
check "x is gone" test ! -e "$M/x"
kill $a $b; wait $a $b 2>/dev/null
finish
