# -o net_threads=4 on both nodes: each publishes four worker addresses, and one large
# replication is carried by more than one network thread on each side (the stats'
# "net_threads": bytes per thread), its bytes the owner's.
. "$(dirname "$0")/netlib.sh"
net_nodes -o net_threads=4
da=$(daemon_pid "$A") db=$(daemon_pid "$B")
naddr() { rcli get "tensorfs:ucx:$1" | awk '{ print NF - 2 }'; }
eq "n1 publishes four addresses" 4 "$(naddr n1)"
eq "n2 publishes four addresses" 4 "$(naddr n2)"
# busy MOUNT: how many of its network threads carried bytes (and how many there are)
busy() {
	python3 -c 'import json, sys
t = json.loads(sys.argv[1]).get("net_threads", [])
print(sum(1 for b in t if b > 0), len(t))' "$(getfattr --only-values -n user.tensorfs.stats "$1")"
}
eq "four threads in n1's stats, none busy yet" "0 4" "$(busy "$A")"
mkdir -p "$A/m"
# 64 MiB and a bit in two tensors: 17 chunks of 4 MiB, round the threads.
rand_tensor "$A/m/w" $((48 * 1024 * 1024 + 4097))
rand_tensor "$A/m/v" $((16 * 1024 * 1024))
check "cp -r from n1 into n2" "$CTL" cp -r -q "$B/m" "$B/r"
check "  w: n1's bytes" cmp "$T/w.src" "$B/r/w"
check "  v: n1's bytes" cmp "$T/v.src" "$B/r/v"
check "a read through n2's mount: n1's bytes" cmp "$T/w.src" "$B/m/w"
read -r na _ <<< "$(busy "$A")"
read -r nb _ <<< "$(busy "$B")"
check "more than one of n1's threads served bytes ($na)" test "$na" -gt 1
check "more than one of n2's threads received bytes ($nb)" test "$nb" -gt 1
# A write from n2 into n1's tensor lands in n1's memory, whichever thread carries it.
head -c $((9 * 1024 * 1024)) /dev/urandom > "$T/patch"
check "n2 writes 9 MiB into n1's tensor" dd if="$T/patch" of="$B/m/w" bs=1M conv=notrunc status=none
check "  n1's tensor holds them" cmp -n $((9 * 1024 * 1024)) "$T/patch" "$A/m/w"
eq "n1's daemon lives on" "$da" "$(daemon_pid "$A")"
eq "n2's daemon lives on" "$db" "$(daemon_pid "$B")"
finish
