# Another node replaces a tensor under a name this kernel knows: the new size and node
# show at once, and libtensorfs's remembered metadata (lib/meta_cache.c) changes with it.
. "$(dirname "$0")/../lib.sh"
two_nodes
printf '1234' > "$A/z"
eq "n2 knows z, 4 bytes" 4 "$(size_of "$B/z")"
rm "$A/z"; printf '12345678' > "$A/z"; tfs_flush
check "n1 replaces z with 8 bytes: n2 sees 8" within test "$(size_of "$B/z")" = 8
eq "and its new node" n1 "$(xget "$B/z" node)"
touch "$A/rz"
setfattr -n user.tensor.dtype -v f32 "$A/rz"
setfattr -n user.tensor.shape -v '[2,3]' "$A/rz"
tfs_flush
eq "libtensorfs on n2 sees n1 replace a tensor by one of the same size" \
	"f32 [2,3] 24|i32 [6] 24|remembered 0" \
	"$("$HELPERS/tfs_client_tool" reopen "$B/rz" "rm $A/rz && touch $A/rz && setfattr -n user.tensor.dtype -v i32 $A/rz && setfattr -n user.tensor.shape -v '[6]' $A/rz && sync $A && sleep 0.05" 2>&1 |
	  head -3 | cut -d' ' -f1-3 | paste -sd'|')"
finish
