# kill -9 of the daemon while queue commands are in flight loses none and serves none twice
# (issue 32, item 5): a command leaves Redis only with its answer, so the daemon the keeper
# starts again serves what its predecessor took and never answered, once. Three rounds of
# 3,000 commands (creates, gets and deletes), pushed while the daemon is stopped (SIGSTOP),
# which is killed a moment after it goes on (at once, 20 ms, its first answer): every id
# is answered exactly once, and with what a single run gives (no create answered EEXIST
# by its own first run, no hold taken twice).
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
sleep 600 & holder=$!
N=1000
# kill9 PID: kill -9 of the daemon PID, then waits up to 50 s for a new one that serves $M.
kill9() {
	kill -9 "$1"
	for _ in $(seq 1000); do
		d2=$(daemon_pid "$M")
		[ -n "$d2" ] && [ "$d2" != "$1" ] && mountpoint -q "$M" && stat -f "$M" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}
for round in 1 2 3; do
	mkdir "$M/r$round"
	tfs_flush
	d=$(daemon_pid "$M")
	kill -STOP "$d"
	# N creates, then a get and a delete (with the holder's pid) of each, pushed at once.
	/usr/bin/python3 - "$round" "$holder" $N <<'PY' | redis-cli -s "$SOCK" --pipe >/dev/null
import sys
r, pid, N = sys.argv[1], sys.argv[2], int(sys.argv[3])
def push(j):
    a = ["LPUSH", "tensor_lifecycle", j]
    sys.stdout.write("*3\r\n" + "".join("$%d\r\n%s\r\n" % (len(x), x) for x in a))
for i in range(N):
    push('{"op":"create","name":"r%s/c%d","dtype":"f32","shape":[256],"id":"c%d","reply":"tq:k%s"}' % (r, i, i, r))
for i in range(N):
    push('{"op":"get","name":"r%s/c%d","pid":%s,"id":"g%d","reply":"tq:k%s"}' % (r, i, pid, i, r))
for i in range(N):
    push('{"op":"delete","name":"r%s/c%d","pid":%s,"id":"d%d","reply":"tq:k%s"}' % (r, i, pid, i, r))
PY
	kill -CONT "$d"
	case $round in
	2) sleep 0.02 ;;
	3) for _ in $(seq 2000); do [ "$(redis-cli -s "$SOCK" llen "tq:k$round")" != 0 ] && break; sleep 0.005; done ;;
	esac
	kill9 "$d"; rc=$?
	eq "round $round: the daemon was killed in flight and serves again" 0 "$rc"
	for _ in $(seq 1200); do [ "$(redis-cli -s "$SOCK" llen "tq:k$round")" -ge $((3 * N)) ] && break; sleep 0.05; done
	tfs_flush; sleep 1     # an answer given twice would have come by now
	redis-cli -s "$SOCK" lrange "tq:k$round" 0 -1 > "$T/replies.$round"
	/usr/bin/python3 - "$T/replies.$round" $N > "$T/verdict.$round" <<'PY'
import json, sys, collections
seen = collections.Counter()
bad = []
for line in filter(str.strip, open(sys.argv[1])):
    d = json.loads(line)
    seen[d["id"]] += 1
    if not d.get("ok"):
        bad.append("%s: %s" % (d["id"], d.get("error")))
ids = ["%s%d" % (k, i) for k in "cgd" for i in range(int(sys.argv[2]))]
missing = [i for i in ids if seen[i] == 0]
twice = [i for i in ids if seen[i] > 1]
print("missing=%d twice=%d failed=%d %s %s %s" % (len(missing), len(twice), len(bad),
      missing[:5], twice[:5], bad[:5]))
PY
	eq "round $round: each of the $((3 * N)) answered once, all ok" "missing=0 twice=0 failed=0 [] [] []" "$(cat "$T/verdict.$round")"
	eq "round $round: the processing list is empty" 0 "$(rcli llen '{tensor_lifecycle}:processing:n1')"
	eq "round $round: $N tensors" "$N" "$(ls "$M/r$round" | wc -l)"
	# Each record: refcount 1 and no holder field (one Lua pass, not a redis-cli each).
	eq "round $round: each record with its name's reference only, no holder left" "$N 0 0" \
		"$(rcli eval "local n, rc, h = 0, 0, 0
			for _, k in ipairs(redis.call('KEYS', ARGV[1])) do
				n = n + 1
				if redis.call('HGET', k, 'refcount') ~= '1' then rc = rc + 1 end
				for _, f in ipairs(redis.call('HKEYS', k)) do
					if string.sub(f, 1, 7) == 'holder:' then h = h + 1 end
				end
			end
			return n .. ' ' .. rc .. ' ' .. h" 0 "tensorfs:tensor:r$round/*")"
done
kill $holder
# At least one kill came while commands were taken and not answered (else the rounds
# showed nothing).
check "a daemon started again served what its predecessor had taken" grep -q "taken before and not answered" "$T/m.log"
finish
