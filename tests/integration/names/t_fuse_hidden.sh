# Names that libfuse's high-level API used for its hidden aliases (.fuse_hidden*) are
# ordinary names now: made, stat'ed, written and removed like any, their memory freed
# (issue 15, item 10: before, any user could make one that could then not be removed).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
check "touch .fuse_hidden0000000100000001" touch "$M/.fuse_hidden0000000100000001"
check "it stats" stat "$M/.fuse_hidden0000000100000001"
check "it takes bytes" sh -c "printf 12345678 > '$M/.fuse_hidden0000000100000001'"
eq "and reads them back" 12345678 "$(cat "$M/.fuse_hidden0000000100000001")"
check "rm removes it" rm "$M/.fuse_hidden0000000100000001"
check "it is gone" test ! -e "$M/.fuse_hidden0000000100000001"
# An open file whose name is removed keeps working without any alias in the directory.
printf abcd > "$M/x"
exec 3<"$M/x"; rm "$M/x"
eq "the directory is empty while x is still open" "" "$(ls -A "$M")"
eq "fstat of the open file still works" 4 "$(stat -L -c %s /dev/fd/3)"
eq "and its bytes read" abcd "$(cat <&3)"
exec 3<&-
# The kernel sends the release after close returns.
soon test "$(used_bytes "$M")" = 0
eq "statfs back to 0" 0 "$(used_bytes "$M")"
finish
