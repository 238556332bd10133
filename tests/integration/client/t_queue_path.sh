# The library's Redis queue path: create (EEXIST the second time), get (a holder, one
# reference, reaped when the process exits), get+delete, delete, and its errors.
. "$(dirname "$0")/../lib.sh"
client_mount
check "queue create" "$TOOL" qcreate "$URL" q1 i32 '[4]'
eq "created tensor appears in the mount" 16 "$(size_of "$M/q1")"
check_err "create again: EEXIST" "error: EEXIST" "$TOOL" qcreate "$URL" q1 i32 '[4]'
"$TOOL" write "$M/q1" 0 0a000000 >/dev/null
# Held until killed below: a fixed hold of a few seconds ran out before the checks on a
# loaded machine under valgrind.
"$TOOL" qget "$URL" q1 600 > "$T/qget.out" &
gp=$!
for _ in $(seq 400); do grep -q i32 "$T/qget.out" 2>/dev/null && break; sleep 0.05; done
eq "get: same tensor as open by path" "$(out "$TOOL" info "$M/q1" | head -1 | cut -d' ' -f1-4)" \
	"$(head -1 "$T/qget.out" | cut -d' ' -f1-4)"
eq "get records this process as a holder" 1 "$(rcli hget tensorfs:tensor:q1 holder:n1:$gp)"
eq "get raises the refcount" 2 "$(rcli hget tensorfs:tensor:q1 refcount)"
kill $gp
wait $gp 2>/dev/null
for _ in $(seq 200); do [ "$(rcli hget tensorfs:tensor:q1 refcount)" = 1 ] && break; sleep 0.1; done
eq "the dead holder is reaped" 1 "$(rcli hget tensorfs:tensor:q1 refcount)"
eq "get, read directly, delete releases the hold" "i32 [4] 16 host rw 0a00000000000000 done" \
	"$(out "$TOOL" qgetdel "$URL" q1 | xargs)"
eq "refcount back to 1" 1 "$(rcli hget tensorfs:tensor:q1 refcount)"
check "delete drops the name" "$TOOL" qdelete "$URL" q1
check "the tensor is gone" test ! -e "$M/q1"
check_err "get of a missing tensor: ENOENT" "error: ENOENT" "$TOOL" qget "$URL" q1
check_err "bad name: EINVAL" "error: EINVAL" "$TOOL" qget "$URL" ../x
finish
