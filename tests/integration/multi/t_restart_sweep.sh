# A daemon killed without unmounting, its memory keeper with it (all of tensorfs gone, as
# when the OOM killer takes both), leaves its records; its next start, with a new keeper
# that holds nothing, removes them (and logs it), leaves other nodes' tensors alone and
# frees the names.
EXPECT_RESTARTS=1     # it kills the daemon and its keeper
. "$(dirname "$0")/../lib.sh"
two_nodes
printf 'ABCDEFGH' > "$A/x"
echo n2 > "$B/qn2"
tfs_flush
not_listed() { ! ls "$A" | grep -qx x; }
new_x() { echo new > "$A/x" && [ "$(cat "$A/x")" = new ]; }
d=$(daemon_pid "$A")
kill -9 "${MNT_PID[$A]}" $d; wait "${MNT_PID[$A]}" 2>/dev/null
unset "MNT_PID[$A]"
fusermount3 -uz "$A"
eq "records of the dead n1 are still there" 1 "$(rcli exists tensorfs:tensor:x)"
mount_tfs "$A" --node n1 || exit 1
eq "restarted n1 removed its stale record" 0 "$(rcli exists tensorfs:tensor:x)"
check "stale tensor not listed" not_listed
check "the removal was logged" grep -q "stale record tensorfs:tensor:x" "$T/a.log"
eq "n2's tensors untouched" n2 "$(rcli hget tensorfs:tensor:qn2 node)"
check "the name is free again" new_x
finish
