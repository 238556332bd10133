# A per-user sender learns nothing about the names in a directory it may not search
# (issue 32, item 10): every command on a name under root's 0700 directory, one that
# exists and one that does not, gets the same answer, EACCES, as through the mount.
# (renew and delete with a pid told them apart: ESRCH for a name there, EACCES for one
# missing.)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/quser_lib.sh"
start_redis || exit 1
M=$T/m
quser_mount "$M" --node n1 || exit 1
mkdir "$M/private"; chmod 700 "$M/private"; touch "$M/private/there"
mkdir "$M/private/sub"
user_sleeper; upid=$UPID
check "the mount says EACCES for both" sh -c "! $NOBODY stat '$M/private/there' && ! $NOBODY stat '$M/private/none'"
for op in \
	"{\"op\":\"renew\",\"name\":\"NAME\",\"pid\":$upid,\"node\":\"n1\",\"lease\":5}" \
	"{\"op\":\"renew\",\"name\":\"NAME\",\"pid\":$upid,\"node\":\"elsewhere\",\"lease\":5}" \
	"{\"op\":\"delete\",\"name\":\"NAME\",\"pid\":$upid}" \
	"{\"op\":\"delete\",\"name\":\"NAME\",\"pid\":12345,\"node\":\"elsewhere\"}" \
	"{\"op\":\"delete\",\"name\":\"NAME\"}" \
	"{\"op\":\"get\",\"name\":\"NAME\"}" \
	"{\"op\":\"get\",\"name\":\"NAME\",\"pid\":$upid}" \
	"{\"op\":\"get\",\"name\":\"NAME\",\"pid\":1,\"node\":\"elsewhere\",\"lease\":5}" \
	'{"op":"create","name":"NAME","dtype":"u8","shape":[1]}'; do
	a=$(usend "${op/NAME/private/there}"); b=$(usend "${op/NAME/private/none}")
	c=$(usend "${op/NAME/private/sub}")
	what=$(echo "$op" | sed 's/"name":"NAME"/"name":N/; s/"pid":[0-9]*/"pid":P/')
	eq "$what: an existing name, a missing one and a directory: EACCES" \
		"EACCES EACCES EACCES" "$(jfield "$a" error) $(jfield "$b" error) $(jfield "$c" error)"
done
eq "nothing changed: refcount 1" 1 "$(xget "$M/private/there" refcount)"
check "the tensor is still there" test -e "$M/private/there"
# Where it may search, the answers stay what they were.
mkdir "$M/open"; touch "$M/open/there"
r=$(usend "{\"op\":\"renew\",\"name\":\"open/there\",\"pid\":$upid,\"node\":\"n1\",\"lease\":5}")
eq "renew where it may search, no hold: ESRCH" ESRCH "$(jfield "$r" error)"
r=$(usend "{\"op\":\"renew\",\"name\":\"open/none\",\"pid\":$upid,\"node\":\"n1\",\"lease\":5}")
eq "renew of a missing name where it may search: ENOENT" ENOENT "$(jfield "$r" error)"
kill $upid 2>/dev/null
finish
