# Another node's tensor read and written through this node's mount, over UCX (TCP on the
# loopback): the bytes are the owner's, small and large (several chunks in flight).
. "$(dirname "$0")/netlib.sh"
net_nodes
printf 'ABCDEFGH' > "$A/x"
eq "n2 reads n1's bytes" ABCDEFGH "$(cat "$B/x")"
printf zz | dd of="$B/x" bs=1 seek=2 conv=notrunc status=none
eq "n2's write lands in n1's memory" ABzzEFGH "$(cat "$A/x")"
rand_tensor "$A/big" $((5 * 1024 * 1024 + 123))
check "a 5 MiB tensor read whole from n2" cmp "$T/big.src" "$B/big"
check "read in 4 MiB blocks too" sh -c "dd if='$B/big' bs=4M status=none | cmp - '$T/big.src'"
head -c 3000000 /dev/urandom > "$T/patch"
dd if="$T/patch" of="$B/big" bs=1M seek=1 conv=notrunc status=none
dd if="$T/patch" of="$T/big.src" bs=1M seek=1 conv=notrunc status=none
check "a 3 MB write from n2 at 1 MiB: n1 holds it" cmp "$T/big.src" "$A/big"
check_err "a write past the end does not grow another node's tensor" "File too large" \
	sh -c "printf q | dd of='$B/x' bs=1 seek=8 conv=notrunc status=none"
eq "n1's tensor still 8 bytes" 8 "$(stat -c %s "$A/x")"
finish
