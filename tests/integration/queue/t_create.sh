# A queue create replies with the id, bytes and handle, makes a ready tensor with one
# reference that the mount shows; a second create of the name is EEXIST; reply keys expire.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
reply_key_expires() { local t; t=$(rcli ttl tq:reply:1); [ "$t" = -2 ] || [ "$t" -gt 0 ]; }
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
check "reply keys expire" reply_key_expires
finish
