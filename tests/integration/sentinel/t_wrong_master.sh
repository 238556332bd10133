# A sentinel:// URL that cannot lead to a primary gives a clear error and changes nothing:
# a master name no sentinel knows, sentinels that do not answer, a URL that does not parse;
# for the daemon (exit status 1 before it mounts) and for the C library.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/group.sh"
sentinel_group 1000 || exit 1
client_tools
export TFS_NODE=n1
bad=${SURL%/*}/nosuch
daemon_fails() {
	local dir=$T/$1 rc; shift
	mkdir -p "$dir"
	timeout 120 "$TFS" -f --redis "$1" --log "$T/$(basename "$dir").log" "$dir"; rc=$?
	[ $rc = 1 ] && ! mountpoint -q "$dir"
}
check "daemon: unknown master name exits 1, unmounted" daemon_fails d1 "$bad"
check "daemon: it says no sentinel knows the name" \
	grep -q "no sentinel knows a master named 'nosuch'" "$T/d1.log"
check_err "library: unknown master name" "no sentinel knows a master named 'nosuch'" \
	"$EX/queue_lifecycle" "$bad" q1
p1=$(free_port); p2=$(free_port)
dead="sentinel://127.0.0.1:$p1,127.0.0.1:$p2/$MASTER"
check "daemon: no sentinel answers: exits 1" daemon_fails d2 "$dead"
check "daemon: it says no sentinel answers" grep -q "no sentinel of master '$MASTER' answers" "$T/d2.log"
check_err "library: no sentinel answers" "no sentinel of master '$MASTER' answers" \
	"$EX/queue_lifecycle" "$dead" q2
check "daemon: a URL with an empty master name exits 1" daemon_fails d3 "${SURL%/*}/"
check "daemon: it says why" grep -q "bad --redis URL.*master's name" "$T/d3.log"
check_err "library: nine sentinels" "more than 8 sentinels" "$EX/queue_lifecycle" \
	"sentinel://a,b,c,d,e,f,g,h,i/$MASTER" q3
eq "nothing was written to the primary" 0 "$(pcli dbsize)"
# The right name connects, for contrast (no daemon serves here: no reply).
check_err "library: the right name connects" "no reply on" "$EX/queue_lifecycle" "$SURL" q4
finish
