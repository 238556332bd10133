# open(O_TRUNC) truncates, and marks mtime and ctime (pjdfstest open/00).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
printf 0123456789 > "$M/f"
t0=$(stat -c %Y.%Z "$M/f")
sleep 1.1
echo ab > "$M/f"
eq "a shell '>' over a longer tensor leaves no old tail" "ab" "$(cat "$M/f")"
eq "its size is what was written" 3 "$(size_of "$M/f")"
check "mtime and ctime moved" test "$(stat -c %Y.%Z "$M/f")" != "$t0"
: > "$M/f"
eq "': >' empties it" 0 "$(size_of "$M/f")"
printf 'xyz' > "$M/g"
python3 -c 'import os,sys; os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_TRUNC))' "$M/g"
eq "O_RDONLY|O_TRUNC truncates, as Linux does on tmpfs" 0 "$(size_of "$M/g")"
finish
