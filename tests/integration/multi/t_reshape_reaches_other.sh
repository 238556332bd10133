# The kernel keeps names and attributes (fs/kernel/kernel_cache.c), but a change made on n1
# reaches n2 through Redis's invalidation messages: a reshape on n1 shows on n2 at once,
# before the second its kernel would otherwise keep the old size.
. "$(dirname "$0")/../lib.sh"
two_nodes
# n1 writes its records behind each operation (microseconds later): tfs_flush waits. The
# timed steps use test's -s (size above 0), a builtin: no process to start under load.
make_z() { touch "$A/z$1" && tfs_flush; }
n2_sees_empty() { [ -e "$B/z$1" ] && [ ! -s "$B/z$1" ]; }
reshape_on_n1() { setfattr -n user.tensor.shape -v '[16]' "$A/z$1"; }
n2_sees_16() { [ -s "$B/z$1" ] && [ "$(size_of "$B/z$1")" = 16 ]; }
before_expiry "n2 sees a reshape on n1 at once" make_z n2_sees_empty reshape_on_n1 n2_sees_16
finish
