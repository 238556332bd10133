# A daemon of one network thread (the record of one address, as daemons before
# -o net_threads published it) and a daemon of four replicate each other's tensors both
# ways: the four-thread side spreads its chunks over its threads, all to the one address.
. "$(dirname "$0")/netlib.sh"
start_redis || exit 1
KEY=$T/cluster.key
make_key "$KEY"
A=$T/a B=$T/b
mount_tfs "$A" --node n1 --cluster-key "$KEY" -o net_threads=1 || exit 1
mount_tfs "$B" --node n2 --cluster-key "$KEY" -o net_threads=4 || exit 1
cd "$T" || exit 1
soon test -n "$(rcli get tensorfs:ucx:n1)" && soon test -n "$(rcli get tensorfs:ucx:n2)"
one_addr() { rcli get tensorfs:ucx:n1 | grep -Eq '^tfs-ucx1 [0-9a-f]{16} [0-9a-f]+$'; }
check "n1's record is the one-address record" one_addr
eq "n2's record has four addresses" 4 "$(rcli get tensorfs:ucx:n2 | awk '{ print NF - 2 }')"
busy() {
	python3 -c 'import json, sys
t = json.loads(sys.argv[1]).get("net_threads", [])
print(sum(1 for b in t if b > 0))' "$(getfattr --only-values -n user.tensorfs.stats "$1")"
}
rand_tensor "$A/a1" $((32 * 1024 * 1024 + 5))
rand_tensor "$B/b1" $((32 * 1024 * 1024 + 7))
check "n2 (4 threads) copies n1's tensor (1 thread)" "$CTL" cp -q "$B/a1" "$B/a1.copy"
check "  its bytes" cmp "$T/a1.src" "$B/a1.copy"
check "n1 (1 thread) copies n2's tensor (4 threads)" "$CTL" cp -q "$A/b1" "$A/b1.copy"
check "  its bytes" cmp "$T/b1.src" "$A/b1.copy"
eq "n1's one thread carried bytes" 1 "$(busy "$A")"
nb=$(busy "$B")
check "more than one of n2's threads carried bytes ($nb)" test "$nb" -gt 1
check "writes both ways" sh -c "printf XYZW | dd of='$B/a1' conv=notrunc status=none &&
	printf QRST | dd of='$A/b1' conv=notrunc status=none"
eq "  n1's tensor" XYZW "$(head -c 4 "$A/a1")"
eq "  n2's tensor" QRST "$(head -c 4 "$B/b1")"
finish
