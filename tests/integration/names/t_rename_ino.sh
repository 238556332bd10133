# A file or directory keeps its inode number when renamed, also after the kernel forgot
# it (pjdfstest rename/00, 09, 10): the number lives in its Redis record, not in its path.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
forget() { sync; echo 2 > /proc/sys/vm/drop_caches; }
mkdir "$M/d" "$M/p"; touch "$M/f"
di=$(stat -c %i "$M/d"); fi=$(stat -c %i "$M/f")
mv "$M/d" "$M/e"; mv "$M/f" "$M/g"
eq "a renamed directory keeps its inode number" "$di" "$(stat -c %i "$M/e")"
eq "a renamed tensor keeps its inode number" "$fi" "$(stat -c %i "$M/g")"
forget
eq "the directory's, after the kernel forgot it" "$di" "$(stat -c %i "$M/e")"
eq "the tensor's, after the kernel forgot it" "$fi" "$(stat -c %i "$M/g")"
mv "$M/e" "$M/p/e"; forget
eq "moved into another directory" "$di" "$(stat -c %i "$M/p/e")"
mkdir "$M/q"; mv -T "$M/p/e" "$M/q"; forget
eq "renamed over an empty directory" "$di" "$(stat -c %i "$M/q")"
rm "$M/g"; touch "$M/g"
check "a new tensor under the old name has a new number" test "$(stat -c %i "$M/g")" != "$fi"
M2=$T/m2
mount_tfs "$M2" --node n2 || exit 1
eq "another node shows the same number" "$di" "$(stat -c %i "$M2/q")"
finish
