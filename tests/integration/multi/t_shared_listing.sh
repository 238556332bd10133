# Several daemons on one Redis see one namespace: a tensor made on n1 is listed on n2
# with its size and node.
. "$(dirname "$0")/../lib.sh"
two_nodes
printf 'ABCDEFGH' > "$A/x"
listed_on_b() { ls "$B" | grep -qx x; }
check "tensor made on n1 is listed on n2" listed_on_b
eq "n2 sees its size" 8 "$(size_of "$B/x")"
eq "n2 sees its node" n1 "$(xget "$B/x" node)"
finish
