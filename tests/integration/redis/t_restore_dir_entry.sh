# Redis lost the root's record and its list of entries, but kept a directory's own record:
# what a FLUSHALL between mkdir's two writes leaves (the entry claimed first, the record
# written behind after it). The restore puts the entry back beside the whole record, and
# leaves fields written since the loss as they are.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
mkdir "$M/kept" "$M/gone"
chmod 0705 "$M/kept"
sync_writes() { for _ in $(seq 200); do [ "$(rcli hget tensorfs:dir:kept mode)" = 705 ] && return 0; sleep 0.1; done; return 1; }
check "kept's record is in Redis" sync_writes
# gone loses its record too; kept's stays whole, with an mtime set after the loss.
rcli del tensorfs:dir: tensorfs:dirents: tensorfs:dir:gone >/dev/null
rcli hset tensorfs:dir:kept mtime 4000000000 >/dev/null
back() { [ "$(rcli hget tensorfs:dirents: kept)" = d ] && [ "$(rcli hget tensorfs:dirents: gone)" = d ]; }
for _ in $(seq 200); do back && break; sleep 0.1; done
check "both entries are back in the root's list" back
eq "kept's mode is its own" 705 "$(rcli hget tensorfs:dir:kept mode)"
eq "kept's mtime written since the loss stays" 4000000000 "$(rcli hget tensorfs:dir:kept mtime)"
eq "gone's record is written again" 755 "$(rcli hget tensorfs:dir:gone mode)"
soon sh -c "ls '$M' | grep -qx kept"
check "ls lists kept" sh -c "ls '$M' | grep -qx kept"
check "ls lists gone" sh -c "ls '$M' | grep -qx gone"
check "the log says Redis lost records" grep -q "Redis lost records" "$T/m.log"
finish
