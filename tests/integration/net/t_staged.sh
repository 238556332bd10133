# -o net_staged: every answer copied out on the staging threads and every pull through a
# buffer of the daemon's (the path of tensors in device memory, fs/net/stage.c), against
# the bytes: reads, writes and a replicated directory, with many requests in flight.
. "$(dirname "$0")/netlib.sh"
net_nodes -o net_staged
mkdir -p "$A/m/d"
for i in 0 1 2; do rand_tensor "$A/m/d/w$i" $((5 * 1024 * 1024 + 1000 * i + 1)); done
rand_tensor "$A/m/small" 100
check "cp -r from n1 into n2, staged" "$CTL" cp -r -q "$B/m" "$B/r"
for f in d/w0 d/w1 d/w2 small; do
	check "  $f: n2's copy holds n1's bytes" cmp "$A/m/$f" "$B/r/$f"
done
check "a read through n2's mount, staged" cmp "$T/w1.src" "$B/m/d/w1"
check "a read at an offset" cmp <(tail -c +3000001 "$T/w2.src") <(tail -c +3000001 "$B/m/d/w2")
head -c 4096 /dev/urandom > "$T/patch"
check "a write from n2 into n1's tensor" dd if="$T/patch" of="$B/m/d/w0" bs=4096 seek=3 conv=notrunc status=none
dd if="$T/patch" of="$T/w0.src" bs=4096 seek=3 conv=notrunc status=none
check "  n1 holds it" cmp "$T/w0.src" "$A/m/d/w0"
for n in a b; do
	check "$n's daemon says it stages" grep -q "net_staged: every answer and pull staged" "$T/$n.log"
done
finish
