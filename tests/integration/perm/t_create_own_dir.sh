# Another uid creates in a directory it owns, and the tensor is its creator's.
. "$(dirname "$0")/../lib.sh"
other_uid_mount
mkdir "$M/d" && chown 65534 "$M/d"
create_mine() { echo hi > "$M/d/mine"; }
export M; export -f create_mine
check "other uid creates in its own directory" $NOBODY bash -c create_mine
eq "created tensor owned by its creator" 65534 "$(stat -c %u "$M/d/mine")"
finish
