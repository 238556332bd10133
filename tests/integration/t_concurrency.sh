# Eight processes at once create, write, read back, reshape, rename and unlink tensors (in
# their own and in one shared directory, with open readers racing unlink) while queue
# clients create and delete. At the end: every byte checked, statfs back to zero, no
# tensor or unlinked keys left in Redis.
. "$(dirname "$0")/lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" || exit 1
cd "$T"
P=8 N=25
head -c 300000 /dev/urandom > "$T/src"
mkdir "$M/shared"

worker() {   # worker ID: prints one line per failure, nothing when all went well
	local i=$1 k f g
	mkdir "$M/w$i" || echo "mkdir w$i"
	for k in $(seq $N); do
		f=$M/w$i/t$k
		head -c $((1000 * k + i)) "$T/src" > "$f" || echo "write $f"
		cmp -s "$f" <(head -c $((1000 * k + i)) "$T/src") || echo "readback $f"
		setfattr -n user.tensor.dtype -v u8 "$f" || echo "dtype $f"
		g=$M/shared/s${i}_$k
		mv "$f" "$g" || echo "rename $f"
		[ "$(stat -c %s "$g")" = $((1000 * k + i)) ] || echo "size after rename $g"
		# A reader holds the tensor open while it is unlinked: it must still read it all.
		exec 7<"$g"
		rm "$g" || echo "unlink $g"
		cmp -s /dev/fd/7 <(head -c $((1000 * k + i)) "$T/src") || echo "read after unlink $g"
		exec 7<&-
		touch "$M/shared/race" 2>/dev/null; rm -f "$M/shared/race" 2>/dev/null
		echo "$k" >> "$T/w$i.done"
	done
	rmdir "$M/w$i" || echo "rmdir w$i"
}

queue_client() {   # create and delete through the queue, checking each reply
	local i=$1 k r
	for k in $(seq 20); do
		rcli lpush tensor_lifecycle "{\"op\":\"create\",\"name\":\"shared/q${i}_$k\",\"dtype\":\"f32\",\"shape\":[64,4],\"id\":\"c\",\"reply\":\"tc:r:$i\"}" >/dev/null
		r=$(rcli brpop "tc:r:$i" 5 | tail -n 1)
		case "$r" in *'"ok":true'*) ;; *) echo "queue create $i/$k: $r" ;; esac
		rcli lpush tensor_lifecycle "{\"op\":\"delete\",\"name\":\"shared/q${i}_$k\",\"id\":\"d\",\"reply\":\"tc:r:$i\"}" >/dev/null
		r=$(rcli brpop "tc:r:$i" 5 | tail -n 1)
		case "$r" in *'"ok":true'*) ;; *) echo "queue delete $i/$k: $r" ;; esac
		echo "$k" >> "$T/q$i.done"
	done
}

for i in $(seq $P); do worker "$i" > "$T/w$i.err" 2>&1 & done
for i in 1 2; do queue_client "$i" > "$T/q$i.err" 2>&1 & done
wait_start=$SECONDS
for j in $(jobs -p); do [ "$j" = "${MNT_PID[$M]}" ] || [ "$j" = "$REDIS_PID" ] || wait "$j"; done
echo "    $P workers x $N cycles and 2 queue clients took $((SECONDS - wait_start)) s"
for i in $(seq $P); do
	eq "worker $i: every step succeeded" "" "$(head -5 "$T/w$i.err")"
	eq "worker $i: all cycles ran" $N "$(wc -l < "$T/w$i.done")"
done
for i in 1 2; do
	eq "queue client $i: every reply ok" "" "$(head -3 "$T/q$i.err")"
	eq "queue client $i: all rounds ran" 20 "$(wc -l < "$T/q$i.done")"
done

# One name, two creators at once: the mount (a FUSE create waits for its name claim
# without the namespace lock) and the lifecycle queue. Each name is made exactly once.
race_mount() {
	local k
	for k in $(seq 40 -1 1); do ( set -C; : > "$M/dup/n$k" ) 2>/dev/null && echo "$k"; done
}
race_queue() {   # all 40 in one LPUSH (from n1 up, the mount from n40 down), then the replies
	local k r cmds=()
	for k in $(seq 40); do
		cmds+=("{\"op\":\"create\",\"name\":\"dup/n$k\",\"dtype\":\"u8\",\"shape\":[8],\"id\":\"$k\",\"reply\":\"tc:dup\"}")
	done
	redis-cli -s "$SOCK" lpush tensor_lifecycle "${cmds[@]}" >/dev/null
	for k in $(seq 40); do
		r=$(redis-cli -s "$SOCK" brpop tc:dup 5 | tail -n 1)
		case "$r" in
		*'"ok":true'*) echo "$r" | grep -o '"id":"[0-9]*"' | grep -o '[0-9]*' ;;
		*EEXIST*) ;;
		*) echo "reply: $r" >&2 ;;
		esac
	done
}
mkdir "$M/dup"
race_mount > "$T/dup.m" & rm_pid=$!
race_queue > "$T/dup.q" 2> "$T/dup.err" & rq_pid=$!
wait $rm_pid $rq_pid
eq "one name, two creators: every name made" 40 "$(sort -un "$T/dup.m" "$T/dup.q" | wc -l)"
eq "one name, two creators: none made twice" 40 "$(cat "$T/dup.m" "$T/dup.q" | wc -l)"
eq "one name, two creators: no reply but ok or EEXIST" "" "$(head -3 "$T/dup.err")"
eq "one name, two creators: 40 listed" 40 "$(ls "$M/dup" | wc -l)"
rm -f "$M"/dup/n*
rmdir "$M/dup"
echo "    the mount won $(wc -l < "$T/dup.m") names, the queue $(wc -l < "$T/dup.q")"
check "the mount is still up" mountpoint -q "$M"
eq "shared dir is empty" "" "$(ls -A "$M/shared")"
rmdir "$M/shared"
eq "statfs: no bytes in use" 0 "$(used_bytes "$M")"
eq "no tensor records left" "" "$(rcli --scan --pattern 'tensorfs:tensor:*')"
eq "no unlinked records left" "" "$(rcli --scan --pattern 'tensorfs:unlinked:*')"
eq "no dir records left but the root" "tensorfs:dir:" "$(rcli --scan --pattern 'tensorfs:dir:*')"
eq "no shared memory objects left" "" "$(ls /dev/shm | grep "^tensorfs\.${MNT_PID[$M]}\." || true)"
cd /
finish
