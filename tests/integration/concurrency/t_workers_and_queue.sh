# Eight processes at once create, write, read back, reshape, rename and unlink tensors (in
# their own and in one shared directory, with open readers racing unlink) while queue
# clients create and delete. At the end: every byte checked, statfs back to zero, no
# tensor, unlinked or directory keys left in Redis.
TEST_TIMEOUT=500
. "$(dirname "$0")/../lib.sh"
one_mount
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
		r=$(rcli brpop "tc:r:$i" 20 | tail -n 1)
		case "$r" in *'"ok":true'*) ;; *) echo "queue create $i/$k: $r" ;; esac
		rcli lpush tensor_lifecycle "{\"op\":\"delete\",\"name\":\"shared/q${i}_$k\",\"id\":\"d\",\"reply\":\"tc:r:$i\"}" >/dev/null
		r=$(rcli brpop "tc:r:$i" 20 | tail -n 1)
		case "$r" in *'"ok":true'*) ;; *) echo "queue delete $i/$k: $r" ;; esac
		echo "$k" >> "$T/q$i.done"
	done
}

pids=()
for i in $(seq $P); do worker "$i" > "$T/w$i.err" 2>&1 & pids+=($!); done
for i in 1 2; do queue_client "$i" > "$T/q$i.err" 2>&1 & pids+=($!); done
wait_start=$SECONDS
wait "${pids[@]}"
echo "    $P workers x $N cycles and 2 queue clients took $((SECONDS - wait_start)) s"
for i in $(seq $P); do
	eq "worker $i: every step succeeded" "" "$(head -5 "$T/w$i.err")"
	eq "worker $i: all cycles ran" $N "$(wc -l < "$T/w$i.done")"
done
for i in 1 2; do
	eq "queue client $i: every reply ok" "" "$(head -3 "$T/q$i.err")"
	eq "queue client $i: all rounds ran" 20 "$(wc -l < "$T/q$i.done")"
done
check "the mount is still up" mountpoint -q "$M"
eq "shared dir is empty" "" "$(ls -A "$M/shared")"
rmdir "$M/shared"
check_nothing_left "$M"
eq "no dir records left but the root" "tensorfs:dir:" "$(rcli --scan --pattern 'tensorfs:dir:*')"
finish
