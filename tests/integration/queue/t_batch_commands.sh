# What a batch of queue commands costs Redis, counted by INFO commandstats around it (every
# call, those a script makes included): the daemon moves the batch onto its processing
# list a few dozen at a time, claims the names of a chunk's creates with one check of each
# parent behind them, and writes a chunk's records and answers in one MULTI/EXEC whose
# last command is one script for all its answers. Made per command, as before, a create
# cost about 17 commands and a delete about 15 (tests/bench/RESULTS-small.md); the bounds
# here leave room for what the daemon does meanwhile on its own (its lease, a look at
# the queue when a list changes) on a slow machine.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
N=256
MAX_CREATE=5
MAX_DELETE=3
mkdir "$M/d"
lrems() {
	redis-cli -s "$SOCK" info commandstats | tr -d '\r' |
		awk -F'[:=,]' '/^cmdstat_lrem:/ { s += $3 } END { print s + 0 }'
}
calls() {
	redis-cli -s "$SOCK" info commandstats | tr -d '\r' |
		awk -F'[:=,]' '/^cmdstat_/ { s += $3 } END { print s + 0 }'
}
# push OP: N commands of OP in one LPUSH, half of them in the root, half in d, answered
# on one reply key as a batch of the library's would be.
push() {
	local i cmds=() name
	for ((i = 0; i < N; i++)); do
		name=c$i
		((i % 2)) && name=d/c$i
		if [ "$1" = create ]; then
			cmds+=("{\"op\":\"create\",\"name\":\"$name\",\"dtype\":\"u8\",\"shape\":[4],\"id\":\"$1$i\",\"reply\":\"tensor_lifecycle:reply:$1\"}")
		else
			cmds+=("{\"op\":\"delete\",\"name\":\"$name\",\"id\":\"$1$i\",\"reply\":\"tensor_lifecycle:reply:$1\"}")
		fi
	done
	redis-cli -s "$SOCK" lpush tensor_lifecycle "${cmds[@]}" >/dev/null
}
# measure OP: the commands Redis ran for N OPs, less the LPUSH and the polls that waited
# for their answers (one command each).
measure() {
	local before polls=0 n after
	before=$(calls)
	push "$1"
	for _ in $(seq 1200); do
		polls=$((polls + 1))
		n=$(redis-cli -s "$SOCK" llen "tensor_lifecycle:reply:$1")
		[ "$n" -ge "$N" ] && break
		sleep 0.05
	done
	after=$(calls)
	echo $((after - before - 1 - polls - 1))
}
answers_ok() {
	redis-cli -s "$SOCK" lrange "tensor_lifecycle:reply:$1" 0 -1 |
		/usr/bin/python3 -c 'import json, sys; print(sum(1 for l in sys.stdin if json.loads(l).get("ok") is True))'
}

# bounded WHAT C MAX: C Redis commands for N commands of a kind are at most MAX each
bounded() {
	local per
	per=$(awk -v c="$2" -v n="$N" 'BEGIN { printf "%.2f", c / n }')
	if awk -v c="$2" -v n="$N" -v m="$3" 'BEGIN { exit !(c <= n * m) }'; then
		ok "$1: $2 Redis commands for $N $1 ($per each, at most $3)"
	else
		nok "$1: $2 Redis commands for $N $1 ($per each, more than $3)"
		redis-cli -s "$SOCK" info commandstats | sed 's/^/      /'
	fi
}

l0=$(lrems)
c=$(measure create)
l1=$(lrems)
eq "creates: every one answered ok" "$N" "$(answers_ok create)"
eq "creates: made" "$N" "$(($(ls "$M" | grep -c '^c') + $(ls "$M/d" | wc -l)))"
eq "creates: records" "$((N / 2)) $((N / 2))" "$(rcli eval "local n = 0 for _, k in ipairs(redis.call('KEYS', 'tensorfs:tensor:c*')) do n = n + 1 end return n" 0) $(rcli hlen tensorfs:dirents:d)"
bounded creates "$c" "$MAX_CREATE"
# A chunk's answered commands are the processing list's oldest, in order: one LTRIM takes
# them, not an LREM each (main before: one per command).
check "creates: their entries left the processing list without an LREM each ($((l1 - l0)) for $N)" \
	test $((l1 - l0)) -le $((N / 8))

c=$(measure delete)
eq "deletes: every one answered ok" "$N" "$(answers_ok delete)"
eq "deletes: nothing left in the mount" "0 0" "$(ls "$M" | grep -c '^c') $(ls "$M/d" | wc -l)"
eq "deletes: nothing left in Redis" "0 0" "$(rcli eval "return #redis.call('KEYS', 'tensorfs:tensor:*')" 0) $(rcli hlen tensorfs:dirents:d)"
bounded deletes "$c" "$MAX_DELETE"
eq "the processing list is empty" 0 "$(rcli llen '{tensor_lifecycle}:processing:n1')"
finish
