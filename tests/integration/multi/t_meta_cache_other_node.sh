# libtensorfs remembers metadata between opens while the attributes are unchanged
# (lib/meta_cache.c): a change made on n1 must change them on n2 too (record ctime_ns).
. "$(dirname "$0")/../lib.sh"
two_nodes
touch "$A/rz"
setfattr -n user.tensor.dtype -v f32 "$A/rz"
setfattr -n user.tensor.shape -v '[2,3]' "$A/rz"
tfs_flush
reopen_b() { "$HELPERS/tfs_client_tool" reopen "$B/rz" "$1" 2>&1 | head -3 | cut -d' ' -f1-3 | paste -sd'|'; }
eq "libtensorfs on n2 sees n1's reshape to the same byte count" "f32 [2,3] 24|f32 [3,2] 24|remembered 0" \
	"$(reopen_b "setfattr -n user.tensor.shape -v '[3,2]' $A/rz && sync $A")"
eq "libtensorfs on n2 remembers an unchanged tensor of n1" "f32 [3,2] 24|f32 [3,2] 24|remembered 1" \
	"$(reopen_b true)"
finish
