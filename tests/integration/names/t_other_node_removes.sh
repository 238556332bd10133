# Another node removes a name this kernel knows: stat and open fail at once, and an
# O_CREAT of the name makes a new tensor here.
. "$(dirname "$0")/../lib.sh"
two_nodes
make_y() { printf 'abcd' > "$A/y$1" && tfs_flush; }
n2_knows_y() { [ -s "$B/y$1" ]; }
rm_on_n1() { rm "$A/y$1"; }
n2_stat_fails() { [ ! -e "$B/y$1" ] && ! stat "$B/y$1"; }
before_expiry "n1 removes it: stat on n2 fails at once" make_y n2_knows_y rm_on_n1 n2_stat_fails
y=y$BE_N
check_err "n1 removes it: open on n2 fails with ENOENT" "No such file" cat "$B/$y"
create_b() { echo new > "$B/$y"; }
check "a name n2 still knew is created afresh on n2 (O_CREAT)" create_b
eq "the new y is n2's" n2 "$(xget "$B/$y" node)"
eq "n1 sees n2's y" 4 "$(size_of "$A/$y")"
finish
