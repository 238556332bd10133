# Directory and name errors: ENOTEMPTY, EISDIR, a directory moved into itself, a missing
# parent, and the 255-byte name limit.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
mkdir "$M/d"; touch "$M/d/x"
check_err "rmdir non-empty: ENOTEMPTY" "not empty" rmdir "$M/d"
check_err "rm of a directory: EISDIR" "Is a directory" rm "$M/d"
check_err "rename dir into itself: EINVAL" "Invalid argument" perl -e 'rename($ARGV[0], $ARGV[1]) or die "$!\n"' "$M/d" "$M/d/sub"
check_err "create in a missing dir: ENOENT" "No such file" touch "$M/nodir/x"
long=$(printf 'x%.0s' $(seq 256))
check_err "name of 256 bytes: ENAMETOOLONG" "too long" touch "$M/$long"
check "name of 255 bytes works" touch "$M/${long:1}"
finish
