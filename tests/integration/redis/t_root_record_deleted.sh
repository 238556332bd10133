# The root's record deleted by hand while the daemon runs: it is written again (with what
# the node knew of it), and the mount's root never gives ESTALE.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
chmod 0751 "$M"
setfattr -n user.tag -v root-note "$M"
echo data > "$M/a"
rcli del tensorfs:dir: >/dev/null
back() { [ "$(redis-cli -s "$SOCK" exists tensorfs:dir:)" = 1 ]; }
for _ in $(seq 200); do back && break; sleep 0.1; done
check "the root record is written again without any call on the mount" back
eq "with its mode" 751 "$(rcli hget tensorfs:dir: mode)"
eq "and its user attribute" root-note "$(rcli hget tensorfs:dir: x:tag)"
rcli del tensorfs:dir: >/dev/null
check "stat of the root just after the deletion works (no ESTALE)" stat "$M"
check "ls of the root works" sh -c "ls '$M' | grep -qx a"
eq "the root keeps its mode" 751 "$(stat -c %a "$M")"
finish
