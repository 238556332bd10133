# Another node removes a name this kernel knows: stat and open fail at once, and an
# O_CREAT of the name makes a new tensor here.
. "$(dirname "$0")/../lib.sh"
two_nodes
printf 'abcd' > "$A/y"
eq "n2 knows n1's tensor y" 4 "$(size_of "$B/y")"
rm "$A/y"; tfs_flush
check "n1 removes it: stat on n2 fails" within not stat "$B/y"
check_err "n1 removes it: open on n2 fails with ENOENT" "No such file" cat "$B/y"
create_b() { echo new > "$B/y"; }
check "a name n2 still knew is created afresh on n2 (O_CREAT)" create_b
eq "the new y is n2's" n2 "$(xget "$B/y" node)"
eq "n1 sees n2's y" 4 "$(size_of "$A/y")"
finish
