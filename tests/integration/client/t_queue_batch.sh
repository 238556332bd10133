# The library's batches (tfs_create_many, tfs_unlink_many): n commands in one LPUSH,
# answered one by one on one reply key. Each item has its own result: a failing item
# (a name that exists, a missing parent, over --max-bytes, a name twice) leaves the others
# done; a bad argument in any item sends nothing. The answer's handle maps the tensor with
# no further request. Clients in one process never share ids (4 threads at once).
. "$(dirname "$0")/../lib.sh"
client_mount
eq "a batch: every item made, written through its handle, unlinked" \
	"a ok ok|b ok ok|c ok ok" "$(out "$TOOL" qmany "$URL" a b:100 c:1 | grep -v done | paste -sd'|')"
check "nothing left in the mount" test -z "$(ls "$M")"
eq "no record left" "" "$(rcli keys 'tensorfs:tensor:*')"
touch "$M/taken"
# taken: EEXIST for the create (the unlink then removes the name that was there);
# nodir/x: no parent; big: over --max-bytes 64M; twice: the second create is EEXIST and
# its unlink finds the name gone (the first unlink took it).
eq "per-item answers: failures leave the others done" \
	"p ok ok|taken EEXIST ok|nodir/x ENOENT ENOENT|big ENOSPC ENOENT|twice ok ok|twice EEXIST ENOENT|q ok ok" \
	"$(out "$TOOL" qmany "$URL" p taken nodir/x big:200000000 twice twice:4 q | grep -v done | paste -sd'|')"
check "nothing left in the mount after the mixed batch" test -z "$(ls "$M")"
check_err "a bad name in any item: nothing sent" "error: EINVAL" "$TOOL" qmany "$URL" ok1 ../bad ok2
check "nothing made for the refused batch" test ! -e "$M/ok1"
check_err "an empty name: EINVAL" "error: EINVAL" "$TOOL" qmany "$URL" ""
eq "unlink of missing names: per item" "m1 ENOENT|m2 ENOENT" \
	"$(out "$TOOL" qunlinkmany "$URL" m1 m2 | grep -v done | paste -sd'|')"
eq "4 clients in one process, 8 per batch: each answer its own" "failures 0" \
	"$(out "$TOOL" qthreads "$URL" 20 | head -1)"
check "nothing left after the threads" test -z "$(ls "$M")"
finish
