# A holder that dies is reaped (and logged); rm of a queue-made tensor removes its record.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
send '{"op":"create","name":"q2","dtype":"u8","shape":[10]}' >/dev/null
sleep 600 & doomed=$!
r=$(send "{\"op\":\"get\",\"name\":\"q2\",\"pid\":$doomed,\"node\":\"n1\"}")
eq "second holder recorded" 2 "$(rcli hget tensorfs:tensor:q2 refcount)"
kill $doomed; wait $doomed 2>/dev/null
for _ in $(seq 200); do [ "$(rcli hget tensorfs:tensor:q2 refcount)" = 1 ] && break; sleep 0.1; done
eq "dead holder reaped" 1 "$(rcli hget tensorfs:tensor:q2 refcount)"
check "reaping was logged" grep -q "holder pid $doomed is gone" "$T/m.log"
check "rm of a queue-created tensor" rm "$M/q2"
eq "its hash gone" 0 "$(rcli exists tensorfs:tensor:q2)"
finish
