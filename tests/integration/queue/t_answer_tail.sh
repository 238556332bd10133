# The answers of a chunk of commands take their entries off the processing list with one
# LTRIM when they are its oldest, in order, and with an LREM each otherwise
# (fs/queue/redis.c answers_lua). Here the tail of the list holds an entry that is none
# of theirs (planted while the daemon runs; it reads the list only at start): every
# command is still answered once, with its records, and the planted entry stays where it
# was.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
N=40
P='{tensor_lifecycle}:processing:n1'
junk='tensor_lifecycle
{"op":"create","name":"planted","dtype":"u8","shape":[4],"id":"planted","reply":"tensor_lifecycle:reply:planted"}'
rcli rpush "$P" "$junk" >/dev/null
push() {
	local i cmds=()
	for ((i = 0; i < N; i++)); do
		cmds+=("{\"op\":\"create\",\"name\":\"$1$i\",\"dtype\":\"u8\",\"shape\":[4],\"id\":\"$1$i\",\"reply\":\"tensor_lifecycle:reply:$1\"}")
	done
	redis-cli -s "$SOCK" lpush tensor_lifecycle "${cmds[@]}" >/dev/null
}
wait_answers() {
	for _ in $(seq 1200); do
		[ "$(rcli llen "tensor_lifecycle:reply:$1")" -ge "$N" ] && break
		sleep 0.05
	done
}
answers() {
	rcli lrange "tensor_lifecycle:reply:$1" 0 -1 |
		/usr/bin/python3 -c 'import json, sys
ids = [json.loads(l)["id"] for l in sys.stdin if json.loads(l).get("ok") is True]
print(len(ids), len(set(ids)))'
}
push a
wait_answers a
sleep 1
eq "every command behind the planted entry answered ok, once" "$N $N" "$(answers a)"
eq "each made" "$N" "$(ls "$M" | grep -c '^a')"
eq "the planted entry alone is left on the processing list" "$junk" "$(rcli lrange "$P" 0 -1)"
eq "not served: nothing planted in the mount" "" "$(ls "$M" | grep planted)"
rcli del "$P" >/dev/null
finish
