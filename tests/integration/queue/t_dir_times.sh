# Creates and deletes through the queue move the directory's mtime and ctime as the mount
# does (issue 15, item 15): a client watching the directory sees the change.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
jfield() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get('$2'))" "$1" 2>/dev/null || echo PARSE_ERROR; }
mkdir "$M/d"
times() { stat -c %Y.%Z "$1"; }
t0=$(times "$M/d"); sleep 1.1
r=$(qsend '{"op":"create","name":"d/x","dtype":"u8","shape":[4]}'); eq "queue create" True "$(jfield "$r" ok)"
t1=$(times "$M/d")
check "a queue create moves its directory's times" test "$t1" != "$t0"
IFS=. read -r m c <<< "$t1"; eq "mtime = ctime" "$m" "$c"
r0=$(times "$M"); sleep 1.1; times "$M" >/dev/null   # the kernel keeps these for a second
r=$(qsend '{"op":"create","name":"top","dtype":"u8","shape":[4]}'); eq "queue create at the root" True "$(jfield "$r" ok)"
check "the root's times move, though the kernel looked at them a moment ago" test "$(times "$M")" != "$r0"
sleep 1.1
r=$(qsend '{"op":"delete","name":"d/x"}'); eq "queue delete" True "$(jfield "$r" ok)"
check "a queue delete moves them again" test "$(times "$M/d")" != "$t1"
eq "and in Redis" "$(stat -c %Y "$M/d")" "$(rcli hget tensorfs:dir:d mtime)"
finish
