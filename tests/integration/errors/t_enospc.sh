# Past --max-bytes a reshape and a write fail with ENOSPC; the reshaped tensor keeps its
# bytes, and the partly written file can be removed.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
make_t23
check_err "shape larger than --max-bytes: ENOSPC" "No space left" setfattr -n user.tensor.shape -v '[1024,1024,128]' "$M/t"
unchanged "out of memory"
eq "still readable after ENOSPC" 24 "$(cat "$M/t" | wc -c)"
check_err "write past --max-bytes: ENOSPC" "No space left" dd if=/dev/zero of="$M/big" bs=1M count=100 status=none
check "partial file removable" rm -f "$M/big"
finish
