# The same exchange over UCX's shared-memory transports instead of TCP.
export UCX_TLS=sm,self
. "$(dirname "$0")/netlib.sh"
net_nodes
rand_tensor "$A/big" $((3 * 1024 * 1024 + 5))
check "n2 reads n1's 3 MiB over shared memory" cmp "$T/big.src" "$B/big"
printf 'WXYZ' | dd of="$B/big" conv=notrunc status=none
eq "n2's write lands on n1" WXYZ "$(head -c 4 "$A/big")"
finish
