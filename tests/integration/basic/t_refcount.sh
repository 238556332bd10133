# Each open descriptor is one reference, in the xattr and in Redis; a create's open is
# counted in the record's first write.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
touch "$M/a"
exec 3<"$M/a"
eq "open fd adds a reference (xattr)" 2 "$(xget "$M/a" refcount)"
eq "open fd adds a reference (Redis)" 2 "$(rcli hget tensorfs:tensor:a refcount)"
exec 4<"$M/a"
eq "second open: 3" 3 "$(rcli hget tensorfs:tensor:a refcount)"
exec 4<&-
# The kernel sends the release after close returns, and the record is written behind it.
soon test "$(rcli hget tensorfs:tensor:a refcount)" = 2
eq "close drops it: 2" 2 "$(rcli hget tensorfs:tensor:a refcount)"
exec 4>"$M/c1"
eq "a tensor created open: refcount 2 (Redis)" 2 "$(rcli hget tensorfs:tensor:c1 refcount)"
eq "and in the xattr" 2 "$(xget "$M/c1" refcount)"
exec 4>&-
soon test "$(rcli hget tensorfs:tensor:c1 refcount)" = 1
eq "closed: 1" 1 "$(rcli hget tensorfs:tensor:c1 refcount)"
exec 3<&-
finish
