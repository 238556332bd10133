# A per-user sender drops only holds it took itself (issue 15, item 2): a delete naming a
# pid that another sender holds through is ESRCH and changes nothing.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/quser_lib.sh"
start_redis || exit 1
M=$T/m
quser_mount "$M" --node n1 || exit 1
touch "$M/t"
sleep 600 & rpid=$!
user_sleeper; upid=$UPID
r=$(qsend "{\"op\":\"get\",\"name\":\"t\",\"pid\":$rpid}"); eq "a trusted get for root's process" True "$(jfield "$r" ok)"
r=$(usend "{\"op\":\"delete\",\"name\":\"t\",\"pid\":$rpid}")
eq "the user cannot drop it: ESRCH" ESRCH "$(jfield "$r" error)"
eq "refcount still 2" 2 "$(xget "$M/t" refcount)"
r=$(usend "{\"op\":\"get\",\"name\":\"t\",\"pid\":$upid}"); eq "the user's own hold" True "$(jfield "$r" ok)"
r=$(usend "{\"op\":\"delete\",\"name\":\"t\",\"pid\":$upid}"); eq "which it drops" True "$(jfield "$r" ok)"
eq "refcount 2 again" 2 "$(xget "$M/t" refcount)"
r=$(qsend "{\"op\":\"delete\",\"name\":\"t\",\"pid\":$rpid}"); eq "root drops its own" True "$(jfield "$r" ok)"
kill $rpid $upid; wait $rpid $upid 2>/dev/null
finish
