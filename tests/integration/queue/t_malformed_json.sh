# Malformed commands (not JSON, not an object, a reply key that is no string) are logged
# and dropped; the daemon keeps serving and the queue drains.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
rcli lpush tensor_lifecycle '{"op":"create", this is not json' >/dev/null
rcli lpush tensor_lifecycle '[1,2,3]' >/dev/null
rcli lpush tensor_lifecycle '{"op":"get","name":"x","reply":["not a string"]}' >/dev/null
r=$(send '{"op":"create","name":"after","dtype":"u8","shape":[3]}')
eq "daemon keeps serving after malformed JSON" True "$(jfield "$r" ok)"
check "malformed JSON logged" grep -q "malformed JSON" "$T/m.log"
eq "queue drained" 0 "$(rcli llen tensor_lifecycle)"
finish
