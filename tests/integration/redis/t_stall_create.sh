# Redis stalls past the daemon's command timeout (1 s) during creates (SIGSTOP: what was
# sent runs once it goes on, as after DEBUG SLEEP, which Redis 7 refuses by default; CLIENT
# PAUSE would drop the commands of a client that gave up): each name ends up
# either fully created (listed, stat works, a record) or fully free (not listed, can be
# created), never listed yet ENOENT/EEXIST.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
touch "$M/warm"
tfs_flush
kill -STOP "$REDIS_PID"
pids=
for i in 1 2 3; do timeout 20 touch "$M/s$i" 2>/dev/null & pids="$pids $!"; done
for i in 1 2; do timeout 20 mkdir "$M/m$i" 2>/dev/null & pids="$pids $!"; done
sleep 2
kill -CONT "$REDIS_PID"
wait $pids
# consistent NAME KIND MAKE: KIND the record's kind (tensor, dir), MAKE what creates it
consistent() {
	local n=$1 kind=$2 make=$3 listed st rec
	for _ in $(seq 50); do
		listed=$(timeout 5 ls "$M" | grep -cx "$n"); st=0
		timeout 5 stat "$M/$n" >/dev/null 2>&1 && st=1
		rec=$(redis-cli -s "$SOCK" exists "tensorfs:$kind:$n")
		[ "$listed$st$rec" = 111 ] && return 0
		[ "$listed$st$rec" = 000 ] && timeout 5 $make "$M/$n" && [ -e "$M/$n" ] && return 0
		sleep 0.1
	done
	echo "$n: listed=$listed stat=$st record=$rec"; return 1
}
for i in 1 2 3; do check "s$i: fully created or fully free after the stall" consistent "s$i" tensor touch; done
for i in 1 2; do check "m$i: fully made or fully free after the stall" consistent "m$i" dir mkdir; done
check "after the stall, new names work" timeout 5 touch "$M/after"
finish
