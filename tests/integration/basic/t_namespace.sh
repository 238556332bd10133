# Directories and names: mkdir, a directory's dtype default, mv of files and directories
# (records follow), listing, and mv over an existing file.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
head -c 3000000 /dev/urandom > "$T/rand"
cp "$T/rand" "$M/w"
inherits_dtype() { touch "$M/dir/t" && [ "$(xget "$M/dir/t" dtype)" = bf16 ]; }
ls_lists() { ls "$M/dir2" | sort | tr '\n' ' ' | grep -qx 't w2 x '; }
mv_replaces() {
	cp "$T/rand" "$M/o1" && echo small > "$M/o2" && mv "$M/o1" "$M/o2" && cmp "$T/rand" "$M/o2" && [ ! -e "$M/o1" ]
}

check "mkdir" mkdir "$M/dir"
check "mkdir -p nested" mkdir -p "$M/dir/x/y"
check "directory dtype default" setfattr -n user.tensor.dtype -v bf16 "$M/dir"
check "new file inherits dtype" inherits_dtype
check "mv a file" mv "$M/w" "$M/dir/w2"
check "moved file has its bytes" cmp "$T/rand" "$M/dir/w2"
check "old name gone" test ! -e "$M/w"
check "mv a directory" mv "$M/dir" "$M/dir2"
check "file under moved dir" cmp "$T/rand" "$M/dir2/w2"
check "nested dir moved" test -d "$M/dir2/x/y"
eq "record follows the rename" 3000000 "$(rcli hget tensorfs:tensor:dir2/w2 bytes)"
eq "no record at the old name" 0 "$(rcli exists tensorfs:tensor:dir/w2)"
check "ls lists entries" ls_lists
check "mv over an existing file replaces it" mv_replaces
finish
