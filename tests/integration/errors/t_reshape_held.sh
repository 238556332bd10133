# A reshape that changes the byte count of a tensor another process holds open is EBUSY;
# one that keeps it is fine, and once released the reshape goes through.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
make_t23
sleep 600 < "$M/t" &
holder=$!
# Until the holder has it open (its open counts in the refcount).
soon test "$(xget "$M/t" refcount)" = 2
check_err "reshape held by another process: EBUSY" "busy" setfattr -n user.tensor.shape -v '[6,6]' "$M/t"
check "same-byte-count reshape while held is fine" setfattr -n user.tensor.shape -v '[3,2]' "$M/t"
kill $holder; wait $holder 2>/dev/null
soon test "$(xget "$M/t" refcount)" = 1
check "reshape once released" setfattr -n user.tensor.shape -v '[6,6]' "$M/t"
finish
