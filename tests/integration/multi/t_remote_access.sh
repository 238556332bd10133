# Another node's tensor shows its handle, but its bytes, shape and name are that node's
# to change: EREMOTE, and the tensor stays intact.
. "$(dirname "$0")/../lib.sh"
two_nodes
printf 'ABCDEFGH' > "$A/x"
write_b() { printf zz | dd of="$B/x" conv=notrunc status=none; }
intact() { [ "$(cat "$A/x")" = ABCDEFGH ]; }
eq "n2 sees its handle" "$(getfattr --only-values -n user.tensor.ipc_handle "$A/x" | od -An -v -tx1)" "$(getfattr --only-values -n user.tensor.ipc_handle "$B/x" | od -An -v -tx1)"
check_err "reading another node's bytes: EREMOTE" "Object is remote" cat "$B/x"
check_err "writing another node's bytes: EREMOTE" "Object is remote" write_b
check_err "reshaping another node's tensor: EREMOTE" "Object is remote" setfattr -n user.tensor.shape -v '[2]' "$B/x"
check_err "removing another node's tensor: EREMOTE" "Object is remote" rm "$B/x"
check "still intact on n1" intact
finish
