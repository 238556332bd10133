# Two daemons in two network namespaces joined by a veth pair (addresses that exist only
# inside them), so the bytes cross a real interface: a replica is copied; then the link
# goes down mid-transfer: the copy ends at the deadline with a clear error and leaves
# nothing; the link back up, a copy succeeds again.
. "$(dirname "$0")/netlib.sh"
NA=tfsa$$ NB=tfsb$$ VA=tva$$ VB=tvb$$
cleanup_ns() { ip netns del "$NA" 2>/dev/null; ip netns del "$NB" 2>/dev/null; }
if ! ip netns add "$NA" 2>/dev/null || ! ip netns add "$NB" 2>/dev/null ||
   ! ip link add "$VA" type veth peer name "$VB" 2>/dev/null; then
	cleanup_ns
	echo "skip - network namespaces or veth pairs not available here"
	exit 0
fi
# Added to lib.sh's own EXIT trap (which ends the watchdog and the mounts).
eval "$(trap -p EXIT | sed "s/^trap -- '/trap -- 'cleanup_ns; kill \${NSPID[*]} 2>\/dev\/null; /")"
ip link set "$VA" netns "$NA" && ip link set "$VB" netns "$NB" &&
ip -n "$NA" addr add 10.231.0.1/30 dev "$VA" && ip -n "$NB" addr add 10.231.0.2/30 dev "$VB" &&
ip -n "$NA" link set "$VA" up && ip -n "$NB" link set "$VB" up &&
ip -n "$NA" link set lo up && ip -n "$NB" link set lo up || { nok "namespace setup"; exit 1; }
# UCX finds interfaces in /sys/class/net, which shows the network namespace of whoever
# mounted sysfs: each daemon gets a mount namespace of its own (private: nothing leaks to
# this one) with a sysfs of its network namespace. Its FUSE mount is then in that mount
# namespace: the test reaches it through /proc/PID/root and runs tensorctl inside it.
start_redis || exit 1
KEY=$T/cluster.key
make_key "$KEY"
declare -A NSPID
ns_mount() {   # ns_mount N NETNS DEV NODE
	local dir=$T/$1
	mkdir -p "$dir"
	nsenter --net=/run/netns/"$2" unshare -m --propagation private sh -c \
		'mount -t sysfs sysfs /sys && exec env UCX_NET_DEVICES="$0" "$@"' "$3" \
		"$TFS" -f --redis "$URL" --log "$T/$1.log" --node "$4" --cluster-key "$KEY" \
		-o net_timeout=3 "$dir" &
	NSPID[$1]=$!
	for _ in $(seq 600); do
		nsenter -t "${NSPID[$1]}" -m mountpoint -q "$dir" 2>/dev/null && return 0
		kill -0 "${NSPID[$1]}" 2>/dev/null || break
		sleep 0.05
	done
	echo "mount of $dir in $2 failed:"; cat "$T/$1.log"; return 1
}
ns_umount() {
	nsenter -t "${NSPID[$1]}" -m fusermount3 -u "$T/$1"
	wait "${NSPID[$1]}" || nok "daemon of $1 exited $?"
}
ns_mount a "$NA" "$VA" n1 || exit 1
ns_mount b "$NB" "$VB" n2 || exit 1
A=/proc/${NSPID[a]}/root$T/a
B=/proc/${NSPID[b]}/root$T/b
inb() { nsenter -t "${NSPID[b]}" -m "$@"; }
soon test -n "$(rcli get tensorfs:ucx:n1)"
check "n1 publishes an address of its veth (10.231.0.1), not the loopback" \
	sh -c "redis-cli -s '$SOCK' get tensorfs:ucx:n1 | grep -q 0ae70001"
mkdir "$A/m"
for i in 0 1; do rand_tensor "$A/m/w$i" $((4 * 1024 * 1024)); done
check "a replica over the veth pair" inb "$CTL" cp -r -q "$T/b/m" "$T/b/r1"
for i in 0 1; do check "  w$i" cmp "$T/w$i.src" "$B/r1/w$i"; done
# The owner stalled while the copy starts, so the link surely goes down mid-transfer.
d=$(pgrep -P "${NSPID[a]}" -x tensorfs | head -1)
rec=$(redis-cli -s "$SOCK" get tensorfs:ucx:n1)
kill -STOP "$d"
# A stopped daemon renews nothing: on a loaded machine its address record (5 s) could lapse
# before the copy reaches it (EREMOTE at once, no wait). Kept without a lifetime while it
# is stopped; its own renewal replaces it once it runs again.
redis-cli -s "$SOCK" set tensorfs:ucx:n1 "$rec" > /dev/null
nsenter -t "${NSPID[b]}" -m "$CTL" cp -r -q "$T/b/m" "$T/b/r2" > "$T/cp.out" 2> "$T/cp.err" &
cp_pid=$!
check "the copy waits for the stopped owner" soon waiting "$cp_pid"
ip -n "$NA" link set "$VA" down
kill -CONT "$d"
wait "$cp_pid"; rc=$?
check "the copy failed" test "$rc" -ne 0
check "with a clear message" grep -q "^tensorctl: .*\(timed out\|reset by peer\)" "$T/cp.err"
gone "$B/r2" "the failed copy"
ip -n "$NA" link set "$VA" up
check "link up: a copy succeeds again" soon inb "$CTL" cp -r -q "$T/b/m" "$T/b/r3"
for i in 0 1; do check "  w$i" cmp "$T/w$i.src" "$B/r3/w$i"; done
for i in 0 1; do check "source w$i intact" cmp "$T/w$i.src" "$A/m/w$i"; done
ns_umount b
ns_umount a
finish
