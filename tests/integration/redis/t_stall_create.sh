# Redis stalls past the daemon's command timeout (1 s) during creates: each name ends up
# either fully created (listed, stat works, a record) or fully free (not listed, can be
# created), never listed yet ENOENT/EEXIST.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
touch "$M/warm"
rcli debug sleep 2 >/dev/null &
sleeper=$!
sleep 0.2
pids=
for i in 1 2 3; do touch "$M/s$i" 2>/dev/null & pids="$pids $!"; done
wait $pids "$sleeper" 2>/dev/null
consistent() {
	local n=$1 listed st rec
	for _ in $(seq 50); do
		listed=$(ls "$M" | grep -cx "$n"); st=0; stat "$M/$n" >/dev/null 2>&1 && st=1
		rec=$(redis-cli -s "$SOCK" exists "tensorfs:tensor:$n")
		[ "$listed$st$rec" = 111 ] && return 0
		[ "$listed$st$rec" = 000 ] && touch "$M/$n" && [ -e "$M/$n" ] && return 0
		sleep 0.1
	done
	echo "$n: listed=$listed stat=$st record=$rec"; return 1
}
for i in 1 2 3; do check "s$i: fully created or fully free after the stall" consistent "s$i"; done
check "after the stall, new names work" touch "$M/after"
finish
