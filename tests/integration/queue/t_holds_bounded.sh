# Holds are bounded (issue 32, item 6): a flood of leased gets on one tensor stops at
# max_holds (EMLINK), one per-user sender stops at max_user_holds over all tensors
# (EDQUOT), and the tensor's owner or root takes holds away (user.tensor.holds = revoke),
# after which rm frees the memory although the leases had a day to run.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../perm/quser_lib.sh"
start_redis || exit 1
M=$T/m
quser_mount "$M" --node n1 --backend host --allow-other -o max_holds=50 -o max_user_holds=70 || exit 1
# flood SENDER TENSOR N FIRSTPID: N leased gets of TENSOR with pids FIRSTPID.., all pushed
# at once (the shared queue, or uid $QUID's own with SENDER=user), answered on one key;
# prints how many were answered ok and the errors of the others, sorted and counted.
flood() {
	local who=$1 name=$2 n=$3 pid=$4 key args=() i
	if [ "$who" = user ]; then key=$QLIST:reply:flood$pid; else key=tq:flood$pid; fi
	for i in $(seq 0 $((n - 1))); do
		args+=("{\"op\":\"get\",\"name\":\"$name\",\"pid\":$((pid + i)),\"node\":\"elsewhere\",\"lease\":86400,\"reply\":\"$key\"}")
	done
	if [ "$who" = user ]; then ucli lpush "$QLIST" "${args[@]}" >/dev/null
	else rcli lpush tensor_lifecycle "${args[@]}" >/dev/null; fi
	for _ in $(seq 400); do [ "$(rcli llen "$key")" -ge "$n" ] && break; sleep 0.05; done
	rcli lrange "$key" 0 -1 | /usr/bin/python3 -c 'import json, sys, collections
c = collections.Counter("ok" if d.get("ok") else d.get("error") for d in map(json.loads, sys.stdin))
print(" ".join("%s:%d" % kv for kv in sorted(c.items())))'
}
touch "$M/t"
eq "60 leased gets of one tensor: 50 held, the rest EMLINK" "EMLINK:10 ok:50" "$(flood shared t 60 1000)"
eq "refcount 51" 51 "$(xget "$M/t" refcount)"
eq "its record has 50 holder fields" 50 "$(rcli hkeys tensorfs:tensor:t | grep -c '^holder:')"
eq "user.tensor.holds lists them" 50 "$(getfattr --absolute-names --only-values -n user.tensor.holds "$M/t" | wc -l)"

# One per-user sender over several tensors: its 70 holds in all.
touch "$M/a" "$M/b"
eq "uid $QUID: 40 holds of a" "ok:40" "$(flood user a 40 2000)"
eq "and of b up to 70 in all, then EDQUOT" "EDQUOT:10 ok:30" "$(flood user b 40 3000)"
eq "b's refcount" 31 "$(xget "$M/b" refcount)"

# Revoking: not by another user; by root, one holder or all.
$NOBODY setfattr -n user.tensor.holds -v revoke "$M/t" 2>"$T/err"
check "uid 65534 may not revoke root's holds" grep -q "Permission denied\|Operation not permitted" "$T/err"
eq "nothing went" 51 "$(xget "$M/t" refcount)"
check "root revokes one holder" setfattr -n user.tensor.holds -v "revoke elsewhere:1000" "$M/t"
eq "refcount 50" 50 "$(xget "$M/t" refcount)"
eq "its field went" 0 "$(rcli hexists tensorfs:tensor:t holder:elsewhere:1000)"
check_err "a holder that holds nothing: ESRCH" "No such process" setfattr -n user.tensor.holds -v "revoke elsewhere:1000" "$M/t"
check_err "garbage: EINVAL" "Invalid argument" setfattr -n user.tensor.holds -v "take them" "$M/t"
check "root revokes them all" setfattr -n user.tensor.holds -v revoke "$M/t"
eq "refcount 1" 1 "$(xget "$M/t" refcount)"
eq "no holder field left" 0 "$(rcli hkeys tensorfs:tensor:t | grep -c '^holder:')"
check "user.tensor.holds is no longer listed" not sh -c "getfattr -d -m - '$M/t' | grep -q holds"
# The holds were the sender's: revoking gives its quota back.
check "root revokes a's" setfattr -n user.tensor.holds -v revoke "$M/a"
eq "uid $QUID may hold b again" "ok:10" "$(flood user b 10 4000)"

# The owner revokes what others hold on its own tensor.
chmod 777 "$M"
$NOBODY sh -c "head -c 4096 /dev/zero > '$M/own'"
eq "root holds uid 65534's tensor" "ok:3" "$(flood shared own 3 5000)"
check "its owner revokes them" $NOBODY setfattr -n user.tensor.holds -v revoke "$M/own"
eq "refcount 1" 1 "$(xget "$M/own" refcount)"
check "rm by its owner" $NOBODY rm "$M/own"
for f in t a b; do setfattr -n user.tensor.holds -v revoke "$M/$f"; rm "$M/$f"; done
eq "every tensor gone: the memory is free" 0 "$(used_bytes "$M")"
eq "and no record is left" "" "$(rcli keys 'tensorfs:tensor:*')"
finish
