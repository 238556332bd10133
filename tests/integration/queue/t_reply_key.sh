# A reply key is only ever a list: the daemon never expires or writes one of its own keys
# or a key of another type, whatever a queue client names as "reply" (issue 15, item 1:
# a reply key of "tensorfs:dir:" expired the root's record).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
touch "$M/x"
push() { rcli lpush tensor_lifecycle "$1" >/dev/null; }
# A command that is answered, to know the ones before it were handled.
sync_queue() { QN=$((QN + 1)); qsend '{"op":"get","name":"nope"}' >/dev/null; }

push '{"op":"get","name":"x","id":"1","reply":"tensorfs:dir:"}'
push '{"op":"get","name":"x","id":"2","reply":"tensorfs:tensor:x"}'
rcli hset user:h a 1 >/dev/null
push '{"op":"get","name":"x","id":"3","reply":"user:h"}'
rcli rpush user:list keep >/dev/null
push '{"op":"get","name":"nope","id":"4","reply":"user:list"}'
push '{"op":"get","name":"nope","id":"5","reply":"fresh:reply"}'
sync_queue
eq "the root's record gets no expiry" -1 "$(rcli ttl tensorfs:dir:)"
eq "the root's record is still a hash" hash "$(rcli type tensorfs:dir:)"
eq "a tensor's record gets no expiry" -1 "$(rcli ttl tensorfs:tensor:x)"
eq "a tensor's record is still a hash" hash "$(rcli type tensorfs:tensor:x)"
eq "a user's hash gets no expiry" -1 "$(rcli ttl user:h)"
eq "and stays a hash" hash "$(rcli type user:h)"
eq "a user's own list gets the reply" 2 "$(rcli llen user:list)"
eq "and no expiry" -1 "$(rcli ttl user:list)"
check "a new reply key is a list that expires" test "$(rcli ttl fresh:reply)" -gt 0
check "the mount still stats after the TTL would have run" stat "$M"
finish
