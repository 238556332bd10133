# The five-minute tour, checked: create, shape, xattrs, cp/dd/cat/truncate, mv, mkdir,
# records in Redis, reference counts, unlink while open, statfs.
. "$(dirname "$0")/lib.sh"
start_redis || exit 1
M=$T/m
# A daemon killed without unmounting leaves its shared memory in /dev/shm; the next daemon
# to start removes what belongs to dead pids (else a reused pid finds its names taken).
sh -c 'exit 0' & dead=$!; wait $dead
head -c 4096 /dev/zero > "/dev/shm/tensorfs.$dead.1"
mount_tfs "$M" --node n1 || exit 1
if [ "$BACKEND" = host ]; then
	# The backend starts just after the mount appears: give it two seconds.
	soon() { for _ in $(seq 40); do "$@" && return 0; sleep 0.05; done; return 1; }
	check "a dead daemon's leftover shared memory is removed at start" soon test ! -e "/dev/shm/tensorfs.$dead.1"
	check "and logged" soon grep -q "died without unmounting" "$T/m.log"
else
	echo "skip - a dead daemon's leftover shared memory is removed at start: the $BACKEND backend uses no /dev/shm"
	rm -f "/dev/shm/tensorfs.$dead.1"
fi
cd "$T"

check "touch makes an empty tensor" touch "$M/a"
eq "empty tensor has size 0" 0 "$(size_of "$M/a")"
eq "empty tensor dtype u8" u8 "$(xget "$M/a" dtype)"
eq "empty tensor shape [0]" "[0]" "$(xget "$M/a" shape)"
check "set dtype f32" setfattr -n user.tensor.dtype -v f32 "$M/a"
check "set shape [1024,1024]" setfattr -n user.tensor.shape -v '[1024,1024]' "$M/a"
eq "size is 4 MiB" 4194304 "$(size_of "$M/a")"
eq "bytes xattr" 4194304 "$(xget "$M/a" bytes)"
eq "shape xattr" "[1024,1024]" "$(xget "$M/a" shape)"
eq "new memory reads as zeros" 0 "$(tr -d '\0' < "$M/a" | wc -c)"
eq "ipc_handle is 64 bytes" 64 "$(getfattr --only-values -n user.tensor.ipc_handle "$M/a" | wc -c)"
eq "ipc_offset 0" 0 "$(xget "$M/a" ipc_offset)"
eq "node xattr" n1 "$(xget "$M/a" node)"
eq "refcount 1 when closed" 1 "$(xget "$M/a" refcount)"
check "meta is JSON with the shape" bash -c "getfattr --only-values -n user.tensor.meta '$M/a' | grep -q '\"shape\":\[1024,1024\]'"
check "listxattr lists the tensor attributes" bash -c "getfattr -d -m - '$M/a' | grep -q user.tensor.ipc_handle"
check "shape input '2,3,4' accepted" setfattr -n user.tensor.shape -v '2,3,4' "$M/a"
eq "shape normalised" "[2,3,4]" "$(xget "$M/a" shape)"
eq "size 96" 96 "$(size_of "$M/a")"
check "numpy dtype name accepted" setfattr -n user.tensor.dtype -v int32 "$M/a"
eq "dtype shown canonically" i32 "$(xget "$M/a" dtype)"

# bytes in and out
head -c 3000000 /dev/urandom > "$T/rand"
check "cp a file in" cp "$T/rand" "$M/w"
check "cmp after cp" cmp "$T/rand" "$M/w"
eq "cp'd file is 1-D u8" "[3000000]" "$(xget "$M/w" shape)"
check "dd with 1 MiB blocks" dd if="$T/rand" of="$M/dd" bs=1M status=none
check "cmp after dd" cmp "$T/rand" "$M/dd"
check "dd write in the middle" dd if=/dev/zero of="$M/dd" bs=1000 seek=5 count=1 conv=notrunc status=none
check "middle bytes changed, rest kept" bash -c "cmp -s <(head -c 5000 '$T/rand') <(head -c 5000 '$M/dd') && [ \"\$(dd if='$M/dd' bs=1000 skip=5 count=1 status=none | tr -d '\\0' | wc -c)\" = 0 ] && cmp -s <(tail -c +6001 '$T/rand') <(tail -c +6001 '$M/dd')"
check "truncate shrinks" truncate -s 1000 "$M/dd"
eq "size after truncate" 1000 "$(size_of "$M/dd")"
check "truncate grows with zeros" truncate -s 5000 "$M/dd"
check "grown part is zero" bash -c "[ \"\$(tail -c 4000 '$M/dd' | tr -d '\\0' | wc -c)\" = 0 ] && cmp -s <(head -c 1000 '$T/rand') <(head -c 1000 '$M/dd')"
check "f32 file of 8 bytes keeps f32" bash -c "touch '$M/f' && setfattr -n user.tensor.dtype -v f32 '$M/f' && head -c 8 /dev/urandom > '$M/f' && [ \"\$(getfattr --only-values -n user.tensor.shape '$M/f')\" = '[2]' ] && [ \"\$(getfattr --only-values -n user.tensor.dtype '$M/f')\" = f32 ]"
check "echo and cat" bash -c "echo hello > '$M/h' && [ \"\$(cat '$M/h')\" = hello ]"

# reshape to the same byte count keeps the data
check "reshape keeps data" bash -c "touch '$M/r' && setfattr -n user.tensor.dtype -v u8 '$M/r' && setfattr -n user.tensor.shape -v '[4,4]' '$M/r' && printf 'ABCDEFGHIJKLMNOP' | dd of='$M/r' conv=notrunc status=none && setfattr -n user.tensor.shape -v '[2,8]' '$M/r' && [ \"\$(cat '$M/r')\" = ABCDEFGHIJKLMNOP ]"
check "dtype change reinterprets (u8 [2,8] -> f32 [2,2])" bash -c "setfattr -n user.tensor.dtype -v f32 '$M/r' && [ \"\$(getfattr --only-values -n user.tensor.shape '$M/r')\" = '[2,2]' ] && [ \"\$(cat '$M/r')\" = ABCDEFGHIJKLMNOP ]"
check "scalar shape []" bash -c "touch '$M/s' && setfattr -n user.tensor.dtype -v f64 '$M/s' && setfattr -n user.tensor.shape -v '[]' '$M/s' && [ \$(stat -c %s '$M/s') = 8 ]"

# namespace
check "mkdir" mkdir "$M/dir"
check "mkdir -p nested" mkdir -p "$M/dir/x/y"
check "directory dtype default" setfattr -n user.tensor.dtype -v bf16 "$M/dir"
check "new file inherits dtype" bash -c "touch '$M/dir/t' && [ \"\$(getfattr --only-values -n user.tensor.dtype '$M/dir/t')\" = bf16 ]"
check "mv a file" mv "$M/w" "$M/dir/w2"
check "moved file has its bytes" cmp "$T/rand" "$M/dir/w2"
check "old name gone" test ! -e "$M/w"
check "mv a directory" mv "$M/dir" "$M/dir2"
check "file under moved dir" cmp "$T/rand" "$M/dir2/w2"
check "nested dir moved" test -d "$M/dir2/x/y"
check "record follows the rename" bash -c "[ \"\$(rcli hget tensorfs:tensor:dir2/w2 bytes)\" = 3000000 ]"
check "no record at the old name" bash -c "[ \"\$(rcli exists tensorfs:tensor:dir/w2)\" = 0 ]"
check "ls lists entries" bash -c "ls '$M/dir2' | sort | tr '\n' ' ' | grep -qx 't w2 x '"
check "mv over an existing file replaces it" bash -c "cp '$T/rand' '$M/o1' && echo small > '$M/o2' && mv '$M/o1' '$M/o2' && cmp '$T/rand' '$M/o2' && [ ! -e '$M/o1' ]"
check "chmod" bash -c "chmod 600 '$M/a' && [ \$(stat -c %a '$M/a') = 600 ] && [ \"\$(rcli hget tensorfs:tensor:a mode)\" = 600 ]"
check "chown" bash -c "chown 1234:5678 '$M/a' && [ \"\$(stat -c %u:%g '$M/a')\" = 1234:5678 ]"
check "touch -d sets mtime" bash -c "touch -d '2020-01-02 03:04:05' '$M/a' && [ \$(stat -c %Y '$M/a') = \$(date -d '2020-01-02 03:04:05' +%s) ]"
check "user xattr set/get" bash -c "setfattr -n user.owner -v alice '$M/a' && [ \"\$(getfattr --only-values -n user.owner '$M/a')\" = alice ]"
check "user xattr listed" bash -c "getfattr -d '$M/a' | grep -q 'user.owner=\"alice\"'"
check "user xattr removed" bash -c "setfattr -x user.owner '$M/a' && ! getfattr -n user.owner '$M/a' 2>/dev/null"

# Redis record of SPEC §7
for f in dtype shape ctime node device bytes ipc_handle refcount ipc_offset state; do
	check "record has field $f" bash -c "[ \"\$(rcli hexists tensorfs:tensor:a $f)\" = 1 ]"
done
eq "record handle equals the xattr" "$(getfattr --only-values -n user.tensor.ipc_handle "$M/a" | od -An -v -tx1 | tr -d ' \n')" \
	"$(rcli --no-raw hget tensorfs:tensor:a ipc_handle >/dev/null; rcli hget tensorfs:tensor:a ipc_handle | head -c 64 | od -An -v -tx1 | tr -d ' \n')"

# reference counts and unlink while open
exec 3<"$M/a"
eq "open fd adds a reference (xattr)" 2 "$(xget "$M/a" refcount)"
eq "open fd adds a reference (Redis)" 2 "$(rcli hget tensorfs:tensor:a refcount)"
exec 4<"$M/a"
eq "second open: 3" 3 "$(rcli hget tensorfs:tensor:a refcount)"
exec 4<&-
sleep 0.1
eq "close drops it: 2" 2 "$(rcli hget tensorfs:tensor:a refcount)"
# A create's open is counted in the record's first write (no HSET of its own after it).
exec 4>"$M/c1"
eq "a tensor created open: refcount 2 (Redis)" 2 "$(rcli hget tensorfs:tensor:c1 refcount)"
eq "and in the xattr" 2 "$(xget "$M/c1" refcount)"
exec 4>&-
sleep 0.1
eq "closed: 1" 1 "$(rcli hget tensorfs:tensor:c1 refcount)"
rm "$M/c1"
# A record left under a free name (a crash, a hand edit) is replaced whole at create.
rcli hset tensorfs:tensor:st node n1 x:stale 1 holder:gone:7 1 >/dev/null
check "create over a stale record" touch "$M/st"
eq "its extra fields are gone" 0 "$(rcli hexists tensorfs:tensor:st x:stale)$(rcli hexists tensorfs:tensor:st holder:gone:7 | tr -d 0)"
eq "the new record counts 1" 1 "$(rcli hget tensorfs:tensor:st refcount)"
check "no stale user xattr shows" bash -c "! getfattr -d '$M/st' 2>/dev/null | grep -q stale"
rm "$M/st"
cp "$T/rand" "$M/u"
exec 5<"$M/u"
check "rm of an open tensor" rm "$M/u"
check "name gone at once" test ! -e "$M/u"
check "name not in listing" bash -c "! ls '$M' | grep -qx u"
check "record moved off the name" bash -c "[ \"\$(rcli exists tensorfs:tensor:u)\" = 0 ] && [ \"\$(rcli --scan --pattern 'tensorfs:unlinked:n1:*' | wc -l)\" = 1 ]"
check "unlinked record refcount 1" bash -c "k=\$(rcli --scan --pattern 'tensorfs:unlinked:n1:*'); [ \"\$(rcli hget \$k refcount)\" = 1 ]"
check "bytes still readable through the fd" bash -c "cmp '$T/rand' - <&5"
check "the name can be reused at once" bash -c "touch '$M/u' && [ \$(stat -c %s '$M/u') = 0 ]"
exec 5<&-
sleep 0.1
check "last close frees the record" bash -c "[ \"\$(rcli --scan --pattern 'tensorfs:unlinked:*' | wc -l)\" = 0 ]"
exec 3<&-

# statfs follows memory and goes back to zero
check "statfs reports memory in use" bash -c "[ \$(stat -f -c '%b' '$M') -gt \$(stat -f -c '%f' '$M') ]"
# The directory cache (fs/dcache.c) follows changes made in Redis by anyone else (Redis
# client tracking): a directory record and an entry edited by hand show in the mount.
mkdir "$M/cd"; stat "$M/cd" >/dev/null; ls "$M/cd" >/dev/null
rcli hset tensorfs:dir:cd mode 700 >/dev/null
check "a directory record edited in Redis shows in the mount" \
	bash -c "for i in \$(seq 50); do [ \$(stat -c %a '$M/cd') = 700 ] && exit 0; sleep 0.02; done; exit 1"
rcli hset tensorfs:dir:cd/sub mode 755 uid 0 gid 0 ctime 1 mtime 1 >/dev/null
rcli hset tensorfs:dirents:cd sub d >/dev/null
check "an entry added in Redis shows in the mount" \
	bash -c "for i in \$(seq 50); do [ -d '$M/cd/sub' ] && exit 0; sleep 0.02; done; exit 1"
rcli hdel tensorfs:dirents:cd sub >/dev/null
check "an entry removed in Redis goes from the mount" \
	bash -c "for i in \$(seq 50); do [ ! -e '$M/cd/sub' ] && exit 0; sleep 0.02; done; exit 1"
rcli del tensorfs:dir:cd/sub >/dev/null

# A written mark (user.tensorfs.event, an IPC event handle from tfs_mark_written) on the
# host backend: nothing to wait for, reads go on; garbage of the wrong size is no mark.
echo marked > "$M/mk"
check "a written mark on the host backend: reads go on" bash -c "setfattr -n user.tensorfs.event -v 0x$(printf '%0128d' 0) '$M/mk' && [ \"\$(cat '$M/mk')\" = marked ]"
check "a mark of the wrong size: stored, reads go on" bash -c "setfattr -n user.tensorfs.event -v junk '$M/mk' && [ \"\$(cat '$M/mk')\" = marked ]"
check "rm -rf everything" bash -c "rm -rf '$M'/*"
sleep 0.2
eq "statfs used back to 0" 0 "$(used_bytes "$M")"
eq "no tensor records left" 0 "$(rcli --scan --pattern 'tensorfs:tensor:*' | wc -l)"
eq "no unlinked records left" 0 "$(rcli --scan --pattern 'tensorfs:unlinked:*' | wc -l)"
eq "no shm objects left" 0 "$(ls /dev/shm | grep -c "^tensorfs\.${MNT_PID[$M]}\.")"
cd /
finish
