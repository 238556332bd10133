# Collision stress (issue 15): 8 processes through the mount and 2 queue clients work on
# a few shared names at once (create, size, write, read, rename, rename(x, x), remove;
# create, get, delete through the queue). No command hangs or goes unanswered, and once
# everyone stops and the names are removed nothing is left: statfs at 0, no records,
# holds or shared-memory objects. COLLIDE_N: iterations per worker.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --max-bytes 256M || exit 1
N=${COLLIDE_N:-150}
names=(a b c)
worker() {   # worker ID: mount operations on the shared names, errors expected
	local i n m
	for i in $(seq "$N"); do
		n=${names[$((RANDOM % 3))]}; m=${names[$((RANDOM % 3))]}
		case $((RANDOM % 9)) in
		0) touch "$M/$n" ;;
		1) setfattr -n user.tensor.shape -v "[$((RANDOM % 64))]" "$M/$n" ;;
		2) head -c $((RANDOM % 5000)) /dev/zero > "$M/$n" ;;
		3) cat "$M/$n" > /dev/null ;;
		4) mv "$M/$n" "$M/$m" ;;
		5) mv "$M/$n" "$M/$n" ;;
		6) rm -f "$M/$n" ;;
		7) truncate -s $((RANDOM % 3000)) "$M/$n" ;;
		8) exec 3<"$M/$n" && { sleep 0.01; exec 3<&-; } ;;
		esac
	done 2>>"$T/errors.$1"
}
qclient() {   # qclient ID HOLDER: queue commands on the same names, one reply list each
	local i n op sent=0
	for i in $(seq "$N"); do
		n=${names[$((RANDOM % 3))]}
		case $((RANDOM % 4)) in
		0) op="\"op\":\"create\",\"dtype\":\"u8\",\"shape\":[$((RANDOM % 4096))]" ;;
		1) op="\"op\":\"get\",\"pid\":$2" ;;
		2) op="\"op\":\"delete\",\"pid\":$2" ;;
		3) op="\"op\":\"delete\"" ;;
		esac
		echo "LPUSH tensor_lifecycle '{$op,\"name\":\"$n\",\"id\":\"$1-$i\",\"reply\":\"co:reply:$1\"}'"
		sent=$((sent + 1))
	done | redis-cli -s "$SOCK" > /dev/null
}
sleep 600 & h1=$!
sleep 600 & h2=$!
pids=()
for w in 1 2 3 4 5 6 7 8; do worker $w & pids+=($!); done
qclient q1 $h1 & pids+=($!)
qclient q2 $h2 & pids+=($!)
ok=1
for p in "${pids[@]}"; do
	# Bounded: a worker that hangs fails the test instead of the suite.
	for _ in $(seq 1200); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$p" 2>/dev/null; then ok=0; kill "$p"; fi
	wait "$p" 2>/dev/null
done
eq "every worker finished within 2 minutes" 1 $ok
# Failures are expected (names come and go under the workers), but only the errors a local
# filesystem gives: never the daemon's internal EREMOTE or ESTALE (stale.h).
cat "$T"/errors.* > "$T/errors"
grep -E 'Stale file handle|Object is remote' "$T/errors" | sed 's/^/#   /'
eq "no 'Object is remote' reached a program" 0 "$(grep -c 'Object is remote' "$T/errors")"
eq "no 'Stale file handle' reached a program" 0 "$(grep -c 'Stale file handle' "$T/errors")"

for _ in $(seq 100); do
	[ "$(rcli llen co:reply:q1)" = "$N" ] && [ "$(rcli llen co:reply:q2)" = "$N" ] && break
	sleep 0.1
done
eq "every queue command answered" "$N $N" "$(rcli llen co:reply:q1) $(rcli llen co:reply:q2)"
check "the mount answers" ls "$M"
kill $h1 $h2; wait $h1 $h2 2>/dev/null
rm -f "$M"/a "$M"/b "$M"/c
for _ in $(seq 200); do [ "$(used_bytes "$M")" = 0 ] && break; sleep 0.1; done
eq "statfs: no memory in use" 0 "$(used_bytes "$M")"
eq "no names left" "" "$(ls -A "$M")"
eq "no tensor records" "" "$(rcli --scan --pattern 'tensorfs:tensor:*')"
eq "no unlinked records" "" "$(rcli --scan --pattern 'tensorfs:unlinked:*')"
eq "no entries" 0 "$(rcli hlen tensorfs:dirents:)"
pid=${MNT_PID[$M]}
# Empty blocks of packed tensors go a second or two after the last (docs/handles.md).
soon test -z "$(ls /dev/shm | grep "^tensorfs\.$pid\." || true)"
eq "no shared-memory objects" "" "$(ls /dev/shm | grep "^tensorfs\.$pid\." || true)"
finish
