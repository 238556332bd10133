# The owner of a host tensor on n1 shrinks its memory object; n2 then reads it and
# replicates it, which n1 answers straight from that memory (fs/net/serve.c, a guarded
# span): both daemons live on, the reads fail or hold what is left, a failed copy leaves
# nothing behind, and the other tensors still read and replicate.
. "$(dirname "$0")/netlib.sh"
net_nodes --allow-other
chmod 755 "$T"
if [ "$BACKEND" != host ]; then
	echo "skip - a host tensor's memory object: the $BACKEND backend has none"
	finish
	exit
fi
mkdir -m 1777 "$A/pub"
head -c 3000 /dev/urandom > "$T/small.src"
head -c $((9 * 1024 * 1024 + 5)) /dev/urandom > "$T/big.src"
chmod 644 "$T/small.src" "$T/big.src"
for f in small big; do
	check "the other uid writes $f on n1" $NOBODY cp "$T/$f.src" "$A/pub/$f"
done
rand_tensor "$A/pub/ok" $((6 * 1024 * 1024 + 3))
d1=$(daemon_pid "$A") d2=$(daemon_pid "$B")
check "before: n2 reads big whole" cmp "$T/big.src" "$B/pub/big"
for f in small big; do
	$NOBODY truncate -s 0 "$(shm_of "$A/pub/$f")"
done
# small's page gone (UCX copies a small answer itself: a fault in its copy), big's past
# its first page (the kernel copies a large one: an error of the send).
$NOBODY truncate -s 4096 "$(shm_of "$A/pub/big")"
# Through n2's mount (each chunk answered from the shrunk memory), and by the pull ioctl.
for f in small big; do
	if cat "$B/pub/$f" > "$T/$f.got" 2>/dev/null; then
		eq "a read of the shrunk $f from n2: the bytes that are left (or an error)" \
			"$(stat -c %s "$T/$f.src")" "$(stat -c %s "$T/$f.got")"
	else
		ok "a read of the shrunk $f from n2 fails"
	fi
	eq "n1's daemon lives on after n2 read $f" "$d1" "$(daemon_pid "$A")"
	check "n2 still reads $f's neighbour" cmp "$T/ok.src" "$B/pub/ok"
	if "$CTL" cp -q "$B/pub/$f" "$B/c$f" 2>/dev/null; then
		ok "cp of the shrunk $f succeeded with what is left"
	else
		gone "$B/c$f" "a failed cp of the shrunk $f"
	fi
	eq "n1's daemon lives on after n2 copied $f" "$d1" "$(daemon_pid "$A")"
done
eq "n2's daemon lives on" "$d2" "$(daemon_pid "$B")"
# The connection may have been dropped on the way: the next request makes a new one.
again() {
	for _ in 1 2 3 4 5; do
		"$CTL" cp -q "$B/pub/ok" "$B/ok2" && return 0
		sleep 1
	done
	return 1
}
check "root's tensor on n1 still replicates" again
check "  its bytes" cmp "$T/ok.src" "$B/ok2"
check "  and reads through n2" cmp "$T/ok.src" "$B/pub/ok"
eq "n1's daemon did not die" "$d1" "$(daemon_pid "$A")"
check "n1 still serves" serves_within 20 "$A"
finish
