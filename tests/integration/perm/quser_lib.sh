# Shared by the per-user queue tests (perm/t_queue_*.sh), sourced after ../lib.sh: a mount
# that gives uid 65534 a queue of its own, and that user's commands.
QUID=65534
QLIST=tensor_lifecycle:u:$QUID
# as_user CMD...: runs CMD as uid/gid 65534, no supplementary groups (a function: in the
# background $! is a subshell's pid, so a holder process is started with setpriv itself)
as_user() { setpriv --reuid=$QUID --regid=$QUID --clear-groups "$@"; }
# quser_mount DIR [options]: Redis reachable by the user (its ACL decides what it may do),
# the mount with --user-queues, and QURL/QUSER/QPASS from the user's credentials file.
quser_mount() {
	local dir=$1 cdir; shift
	chmod 755 "$T"; chmod 777 "$SOCK"
	mount_tfs "$dir" --user-queues $QUID "$@" || return 1
	cdir=$(grep -o 'credentials in [^ ]*/<uid>.url' "$T/$(basename "$dir").log" | head -1 |
		sed 's/credentials in //; s,/<uid>.url,,')
	QCRED=$cdir/$QUID.url
	QURL=$(cat "$QCRED") || return 1
	QUSER=$(echo "$QURL" | sed 's,^unix://,,; s,:.*,,')
	QPASS=$(echo "$QURL" | sed 's,^unix://[^:]*:,,; s,@.*,,')
}
# user_sleeper: UPID, a process of the user's, once it runs as the user
user_sleeper() {
	setpriv --reuid=$QUID --regid=$QUID --clear-groups sleep 600 & UPID=$!
	for _ in $(seq 1000); do [ "$(stat -c %u /proc/$UPID 2>/dev/null)" = $QUID ] && return 0; sleep 0.02; done
}
# ucli ARGS...: redis-cli as the user, logged in as its ACL user
ucli() { as_user redis-cli --no-auth-warning -s "$SOCK" --user "$QUSER" --pass "$QPASS" "$@"; }
# usend JSON [TIMEOUT]: qsend through the user's own list and reply keys (a fresh id each
# time: usend runs in $(...), where a counter would not count)
usend() {
	local n=$RANDOM$RANDOM$RANDOM
	local json=${1/\}/,\"id\":\"u$n\",\"reply\":\"$QLIST:reply:$n\"\}}
	tfs_flush
	ucli lpush "$QLIST" "$json" >/dev/null
	ucli brpop "$QLIST:reply:$n" "${2:-20}" | tail -n 1
}
jfield() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get('$2'))" "$1" 2>/dev/null || echo PARSE_ERROR; }
