# A per-user queue through a Sentinel group: the daemon (--user-queues, --redis
# sentinel://...) hands the user a sentinel:// URL with its ACL user; the user's C library
# client creates, gets and deletes through it, and again after the primary was killed and
# the replica promoted (the daemon makes the user's ACL user on the new primary: ACLs are
# not replicated).
TEST_TIMEOUT=600
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/group.sh"
QUID=65534
as_user() { setpriv --reuid=$QUID --regid=$QUID --clear-groups "$@"; }
sentinel_group 1000 || exit 1
client_tools
chmod 755 "$T"
URL=$SURL
M=$T/m
mount_tfs "$M" --user-queues $QUID || exit 1
cdir=$(grep -o 'credentials in [^ ]*/<uid>.url' "$T/m.log" | head -1 | sed 's/credentials in //; s,/<uid>.url,,')
QURL=$(cat "$cdir/$QUID.url")
case "$QURL" in
"sentinel://u$QUID.tensor_lifecycle:"*"@127.0.0.1:${SPORT[0]},127.0.0.1:${SPORT[1]},127.0.0.1:${SPORT[2]}/$MASTER?db=0")
	ok "the user's URL names the sentinels and the master" ;;
*) nok "the user's URL: $(echo "$QURL" | sed 's/:[^:@]*@/:***@/')" ;;
esac
mkdir "$M/u" && chown $QUID:$QUID "$M/u"
user_round() { as_user "$EX/queue_lifecycle" "$QURL" "u/$1"; }
check "the user's library client through sentinel://" user_round u1
eq "its tensor is gone once deleted" 0 "$(pcli exists tensorfs:tensor:u/u1)"
kill -9 "$PID_P"; wait "$PID_P" 2>/dev/null
check "the sentinels promote the replica" wait_failover
acl_back() { gcli -p "$PORT_R" acl list | grep -q "^user u$QUID.tensor_lifecycle on"; }
check "the daemon makes the user's ACL user on the new primary" waits_for 120 acl_back
check "the user's client after the failover" waits_for 120 user_round u2
finish
