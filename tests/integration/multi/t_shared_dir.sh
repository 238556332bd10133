# A directory made on one node is everyone's; a tensor in it is its creator's, and its
# name is taken for the other node too.
. "$(dirname "$0")/../lib.sh"
two_nodes
mkdir_b() { mkdir "$B/shared" && [ -d "$A/shared" ]; }
tensor_b() { echo hi > "$B/shared/y" && [ "$(cat "$B/shared/y")" = hi ] && [ "$(size_of "$A/shared/y")" = 3 ]; }
check "mkdir on n2 shows on n1" mkdir_b
check "tensor in a shared dir made on n2" tensor_b
check_err "one name, one tensor: n1 cannot create y too" "File exists" /usr/bin/python3 -c "open('$A/shared/y', 'x')"
finish
