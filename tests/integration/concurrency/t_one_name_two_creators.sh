# One name, two creators at once: the mount (a FUSE create waits for its name claim
# without the namespace lock) and the lifecycle queue. Each name is made exactly once.
TEST_TIMEOUT=300
. "$(dirname "$0")/../lib.sh"
one_mount
race_mount() {
	local k
	for k in $(seq 40 -1 1); do ( set -C; : > "$M/dup/n$k" ) 2>/dev/null && echo "$k"; done
}
race_queue() {   # all 40 in one LPUSH (from n1 up, the mount from n40 down), then the replies
	local k r cmds=()
	for k in $(seq 40); do
		cmds+=("{\"op\":\"create\",\"name\":\"dup/n$k\",\"dtype\":\"u8\",\"shape\":[8],\"id\":\"$k\",\"reply\":\"tc:dup\"}")
	done
	redis-cli -s "$SOCK" lpush tensor_lifecycle "${cmds[@]}" >/dev/null
	for k in $(seq 40); do
		r=$(redis-cli -s "$SOCK" brpop tc:dup 20 | tail -n 1)
		case "$r" in
		*'"ok":true'*) echo "$r" | grep -o '"id":"[0-9]*"' | grep -o '[0-9]*' ;;
		*EEXIST*) ;;
		*) echo "reply: $r" >&2 ;;
		esac
	done
}
mkdir "$M/dup"
race_mount > "$T/dup.m" & rm_pid=$!
race_queue > "$T/dup.q" 2> "$T/dup.err" & rq_pid=$!
wait $rm_pid $rq_pid
eq "one name, two creators: every name made" 40 "$(sort -un "$T/dup.m" "$T/dup.q" | wc -l)"
eq "one name, two creators: none made twice" 40 "$(cat "$T/dup.m" "$T/dup.q" | wc -l)"
eq "one name, two creators: no reply but ok or EEXIST" "" "$(head -3 "$T/dup.err")"
eq "one name, two creators: 40 listed" 40 "$(ls "$M/dup" | wc -l)"
echo "    the mount won $(wc -l < "$T/dup.m") names, the queue $(wc -l < "$T/dup.q")"
rm -f "$M"/dup/n*
rmdir "$M/dup"
check_nothing_left "$M"
finish
