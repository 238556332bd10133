# Another node replaces a tensor under a name this kernel knows: the new size and node
# show at once, and libtensorfs's remembered metadata (lib/meta_cache.c) changes with it.
. "$(dirname "$0")/../lib.sh"
two_nodes
make_z() { printf '1234' > "$A/z$1" && tfs_flush; }
n2_knows_z() { [ "$(size_of "$B/z$1")" = 4 ]; }
replace_on_n1() { rm "$A/z$1" && printf '12345678' > "$A/z$1"; }
n2_sees_8() { [ "$(size_of "$B/z$1")" = 8 ]; }
before_expiry "n1 replaces z with 8 bytes: n2 sees 8 at once" make_z n2_knows_z replace_on_n1 n2_sees_8
eq "and its new node" n1 "$(xget "$B/z$BE_N" node)"
touch "$A/rz"
setfattr -n user.tensor.dtype -v f32 "$A/rz"
setfattr -n user.tensor.shape -v '[2,3]' "$A/rz"
tfs_flush
ino=$(stat -c %i "$B/rz")
N2_SEES_NEW_INO="for i in \$(seq 400); do [ \$(stat -c %i $B/rz) != $ino ] && break; sleep 0.05; done"
# (the change reaches n2's kernel through Redis: until then, n2's stat shows the old inode)
eq "libtensorfs on n2 sees n1 replace a tensor by one of the same size" \
	"f32 [2,3] 24|i32 [6] 24|remembered 0" \
	"$("$HELPERS/tfs_client_tool" reopen "$B/rz" "rm $A/rz && touch $A/rz && setfattr -n user.tensor.dtype -v i32 $A/rz && setfattr -n user.tensor.shape -v '[6]' $A/rz && sync $A && $N2_SEES_NEW_INO" 2>&1 |
	  head -3 | cut -d' ' -f1-3 | paste -sd'|')"
finish
