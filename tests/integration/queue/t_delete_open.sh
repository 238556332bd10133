# A name the queue removes while a process has it open: the process's file stays the old
# tensor, as after rm through the mount, and never turns into a tensor the queue makes
# under the same name later (issue 15, item 15: the kernel's node is detached).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
jfield() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get('$2'))" "$1" 2>/dev/null || echo PARSE_ERROR; }
head -c 32 /dev/zero > "$M/a"
exec 3<"$M/a"
r=$(qsend '{"op":"delete","name":"a"}'); eq "queue delete" True "$(jfield "$r" ok)"
r=$(qsend '{"op":"create","name":"a","dtype":"u8","shape":[2]}'); eq "queue create under the same name" True "$(jfield "$r" ok)"
eq "the name is the new tensor" 2 "$(stat -c %s "$M/a")"
eq "the open file, by its inode, is still the old one" 32 "$(stat -L -c %s /proc/self/fd/3)"
eq "its attributes too" "[32]" "$(getfattr --only-values -n user.tensor.shape /proc/self/fd/3 2>/dev/null)"
check "a change through it does not reach the new tensor" setfattr -n user.x -v old /proc/self/fd/3
eq "the new tensor has no such attribute" "" "$(getfattr --only-values -n user.x "$M/a" 2>/dev/null)"
exec 3<&-
rm "$M/a"
for _ in $(seq 200); do [ "$(used_bytes "$M")" = 0 ] && break; sleep 0.1; done
eq "both tensors' memory is free" 0 "$(used_bytes "$M")"
finish
