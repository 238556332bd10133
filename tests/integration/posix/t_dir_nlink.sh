# A directory's link count is 2 plus its subdirectories (pjdfstest rename/24).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
mkdir -p "$M/p/c"
eq "mkdir -p p/c: p has 3 links" 3 "$(stat -c %h "$M/p")"
eq "c has 2" 2 "$(stat -c %h "$M/p/c")"
touch "$M/p/t"
eq "a tensor in p adds none" 3 "$(stat -c %h "$M/p")"
mkdir "$M/p/c2"
eq "a second subdirectory: 4" 4 "$(stat -c %h "$M/p")"
rmdir "$M/p/c"
eq "rmdir of one: 3" 3 "$(stat -c %h "$M/p")"
mkdir "$M/q"
mv "$M/p/c2" "$M/q/"
eq "moved out: p has 2" 2 "$(stat -c %h "$M/p")"
eq "moved in: q has 3" 3 "$(stat -c %h "$M/q")"
eq "the root counts p and q: 4" 4 "$(stat -c %h "$M")"
mkdir "$M/r"; mkdir "$M/q/c3"
mv -T "$M/r" "$M/q/c2"
eq "a directory replacing an empty one keeps the count (c2, c3)" 4 "$(stat -c %h "$M/q")"
eq "and the root lost r: 4" 4 "$(stat -c %h "$M")"
finish
