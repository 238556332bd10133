# kill -9 of the daemon in the middle of a directory's move between tiers (docs/tiers.md)
# leaves every tensor whole on one tier or the other, never lost or torn: the keeper owns
# both objects during a move, the record names the new one before the old is freed, and
# the daemon the keeper starts again adopts the one its record names. Three rounds,
# sleep and wake, the kill at once, after the first tensor moved, and half-way.
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --backend host -o host_devices=1 || exit 1
N=24
mkdir "$M/model"
for i in $(seq $N); do
	head -c $((4 << 20)) /dev/urandom > "$T/b$i"
	cp "$T/b$i" "$M/model/t$i"
done
kill9() {
	kill -9 "$1"
	for _ in $(seq 1000); do
		d2=$(daemon_pid "$M")
		[ -n "$d2" ] && [ "$d2" != "$1" ] && mountpoint -q "$M" && stat -f "$M" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}
# on_tier: how many records say device $1 (read from Redis, not through the mount)
on_tier() {
	redis-cli -s "$SOCK" eval "local n = 0
		for _, k in ipairs(redis.call('KEYS', ARGV[1])) do
			if redis.call('HGET', k, 'device') == ARGV[2] then n = n + 1 end
		end
		return n" 0 'tensorfs:tensor:model/*' "$1"
}
whole() {
	local i dev bad=0
	for i in $(seq $N); do
		dev=$(xget "$M/model/t$i" device)
		case $dev in cpu|0) ;; *) echo "t$i on '$dev'"; bad=1 ;; esac
		cmp -s "$T/b$i" "$M/model/t$i" || { echo "t$i: bytes differ ($dev)"; bad=1; }
	done
	return $bad
}
round=0
for to in cpu 0 cpu; do
	round=$((round + 1))
	from=$([ $to = cpu ] && echo 0 || echo cpu)
	d=$(daemon_pid "$M")
	"$CTL" mv -q --device "$to" "$M/model" > "$T/mv.$round" 2>&1 & mv=$!
	case $round in
	2) for _ in $(seq 2000); do [ "$(on_tier "$to")" -ge 1 ] && break; sleep 0.002; done ;;
	3) for _ in $(seq 4000); do [ "$(on_tier "$to")" -ge $((N / 2)) ] && break; sleep 0.002; done ;;
	esac
	kill9 "$d"; rc=$?
	eq "round $round ($from to $to): the daemon was killed mid-move and serves again" 0 "$rc"
	wait $mv
	sed 's/^/# mv: /' "$T/mv.$round"     # what the interrupted move said
	echo "# round $round: $(on_tier cpu) on cpu, $(on_tier 0) on 0 after the restart"
	check "round $round: every tensor whole, on cpu or 0" whole
	eq "round $round: $N tensors" "$N" "$(ls "$M/model" | wc -l)"
	eq "round $round: each on one tier" "$N" "$(( $(on_tier cpu) + $(on_tier 0) ))"
	eq "round $round: the backend holds $N objects" "$N" \
		"$(getfattr --only-values -n user.tensorfs.stats "$M" | /usr/bin/python3 -c 'import json,sys; print(sum(d["allocations"] for d in json.load(sys.stdin)["devices"]))')"
	# settle where the round's move meant them to be, for the next round
	check "round $round: the move finishes once run again" "$CTL" mv -q --device "$to" "$M/model"
done
check "every tensor whole after the rounds" whole
finish
