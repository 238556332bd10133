# A directory's attributes come from the directory cache without the namespace lock
# (fuse/ops_file.c, stat_dir_cached) only when the parent's cached entries list it as a
# directory and its cached record has the node's own inode number; otherwise they are
# asked for as before. A shell sitting in a directory sees, once the kernel asks again
# (attributes are kept 1 s):
# - after rmdir and a mkdir of the same name: its directory is gone (ENOENT), not the new one;
# - after a rename of it: its directory, with the same inode number;
# - after its entry was removed by hand in Redis (the record left): gone, as a lookup says.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
mkdir "$M/d" "$M/p" "$M/h"
touch "$M/d/x"
# held DIR SECONDS: stat of "." from a shell that entered DIR, SECONDS later
held() { (cd "$1" && sleep "$2" && stat -c '%i %a' . 2>&1) > "$T/held.out" & }

held "$M/d" 1.5
sleep 0.3
rm "$M/d/x"; rmdir "$M/d"; mkdir -m 700 "$M/d"
wait $!
check "after rmdir and mkdir of its name, a shell in the old directory finds it gone" \
	grep -q "No such file or directory" "$T/held.out"
eq "the new directory is another" 700 "$(stat -c %a "$M/d")"

ino=$(stat -c %i "$M/p")
held "$M/p" 1.5
sleep 0.3
mv "$M/p" "$M/q"
wait $!
eq "after a rename, a shell in it still finds its directory" "$ino 755" "$(cat "$T/held.out")"

held "$M/h" 2.5
sleep 0.3
rcli hdel "tensorfs:dirents:" h >/dev/null
wait $!
check "after its entry was removed in Redis, a shell in it finds it gone" \
	grep -q "No such file or directory" "$T/held.out"
finish
