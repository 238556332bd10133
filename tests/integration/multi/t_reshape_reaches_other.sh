# The kernel keeps names and attributes (fs/kernel_cache.c), but a change made on n1
# reaches n2 through Redis's invalidation messages: a reshape on n1 shows on n2 at once.
. "$(dirname "$0")/../lib.sh"
two_nodes
touch "$A/z"; eq "n2 sees the empty tensor" 0 "$(size_of "$B/z")"
setfattr -n user.tensor.shape -v '[16]' "$A/z"
# n1 writes its record behind the setfattr (microseconds later): wait for that, then n2
# must see it well within the second its kernel would otherwise keep the old size.
tfs_flush
z_on_n2_is_16() { test "$(size_of "$B/z")" = 16; }
check "n2 sees a reshape on n1 at once" within z_on_n2_is_16
finish
