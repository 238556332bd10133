# A directory's atime is its own, not its mtime (pjdfstest utimensat/00).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
mkdir "$M/d"
m0=$(stat -c %Y "$M/d")
touch -a -d @1900000000 "$M/d"
eq "touch -a sets the atime" 1900000000 "$(stat -c %X "$M/d")"
eq "and leaves the mtime" "$m0" "$(stat -c %Y "$M/d")"
touch -m -d @1800000000 "$M/d"
eq "touch -m sets the mtime" 1800000000 "$(stat -c %Y "$M/d")"
eq "and leaves the atime" 1900000000 "$(stat -c %X "$M/d")"
finish
