# --preallocate (docs/tiers.md#preallocation) on the host backend with two stand-in devices:
# each named tier's pool is reserved at start and reported (the stats attribute's
# "preallocated", statfs's size), creates and moves draw from it (no new object in
# /dev/shm, the tensor at an offset of a segment; small ones too, which a tier without a
# pool packs), what a freed tensor left is never seen by the next, a tensor of other
# readers gets a segment of its own, ENOSPC once the pool is spent (no --max-bytes: the
# pool is the tier), fresh memory beyond it up to --max-bytes, and bad lists are refused.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
cd "$T" || exit 1
M=$T/m
# stat_of TIER FIELD: a field of the stats attribute for one tier
stat_of() { tier_stat "$M" "$@"; }
# objects: the shared-memory objects of the mount's keeper (its directory in /dev/shm)
objects() { find "$KDIR" -type f | sort; }
mount_tfs "$M" --backend host -o host_devices=2 --preallocate cpu:16M,0:8M || exit 1
eq "the host tier's pool: 16 MiB" $((16 << 20)) "$(stat_of cpu preallocated)"
eq "device 0's pool: 8 MiB" $((8 << 20)) "$(stat_of 0 preallocated)"
eq "device 1 has none" 0 "$(stat_of 1 preallocated)"
eq "nothing is used yet" 0 "$(stat_of cpu used)"
mkdir "$M/host"
setfattr -n user.tensor.device -v cpu "$M/host"
eq "statfs of the host tier: its pool, 16 MiB" $((16 << 20)) "$(( $(stat -f -c '%b*%S' "$M/host") ))"
truncate -s 4096 "$M/probe"
KDIR=$(dirname "$(shm_of "$M/probe")")
rm "$M/probe"
before=$(objects | wc -l)
# 2 MiB segments; each pool is laid out as runs for half of it, single segments for the
# rest (fs/mem/pool.h): 16 MiB as a run of 4 and 4 singles, 8 MiB as a run of 2 and 2
eq "the pools are objects of the keeper: 5 + 3 pieces" 8 "$before"
# 2 MiB segments (an eighth of the pool, 2 MiB at least): these share one of device 0
head -c $((512 << 10)) /dev/urandom > "$T/a"
head -c $((512 << 10)) /dev/urandom > "$T/b"
cp "$T/a" "$M/a"; cp "$T/b" "$M/b"
eq "creates make no object: they are carved from the pool" "$before" "$(objects | wc -l)"
eq "a and b share a segment" "$(shm_of "$M/a")" "$(shm_of "$M/b")"
check "b lies at an offset of it" test "$(xget "$M/b" ipc_offset)" != "$(xget "$M/a" ipc_offset)"
check "a's bytes" cmp "$T/a" "$M/a"
map_dump "$M/b" > "$T/b.mapped"
check "a process maps b by its handle and offset and reads its bytes" cmp "$T/b" "$T/b.mapped"
eq "device 0 counts 1 MiB used" $((1 << 20)) "$(stat_of 0 used)"
eq "device 0's pool is still 8 MiB" $((8 << 20)) "$(stat_of 0 preallocated)"

# Small tensors (-o host_pack, perm/t_host_pack): a preallocated tier's are carved from its
# pool too; device 1, without a pool, packs them into a block.
printf 'small' > "$M/s"
eq "a small tensor on a preallocated tier lies in the pool's segment" "$(shm_of "$M/a")" "$(shm_of "$M/s")"
eq "and makes no object" "$before" "$(objects | wc -l)"
mkdir "$M/d1"
setfattr -n user.tensor.device -v 1 "$M/d1"
printf 'one' > "$M/d1/s"
printf 'two' > "$M/d1/t"
eq "on device 1 (no pool) two small tensors share a packed block" "$(shm_of "$M/d1/s")" "$(shm_of "$M/d1/t")"
eq "one object more there: the block" $((before + 1)) "$(objects | wc -l)"
rm -r "$M/s" "$M/d1"
check "the block goes after its last tensor" soon eval '[ "$(objects | wc -l)" -eq "$before" ]'

# moves in and out of pools
check "a sleeps to the host tier (pool to pool)" setfattr -n user.tensor.device -v cpu "$M/a"
check "its bytes" cmp "$T/a" "$M/a"
eq "the host tier's pool made no object either" "$before" "$(objects | wc -l)"
check "a wakes on device 1 (no pool)" setfattr -n user.tensor.device -v 1 "$M/a"
check "and back to device 0's pool" setfattr -n user.tensor.device -v 0 "$M/a"
check "its bytes after three moves" cmp "$T/a" "$M/a"
map_dump "$M/a" > "$T/a.mapped"
check "and through its handle" cmp "$T/a" "$T/a.mapped"

# what a freed tensor leaves is zeroed for the next
rm "$M/b"
truncate -s $((512 << 10)) "$M/z"
head -c $((512 << 10)) /dev/zero > "$T/zeros"
check "a tensor made where b was reads zeros" cmp "$T/zeros" "$M/z"
truncate -s $((700 << 10)) "$M/z"
head -c $((700 << 10)) /dev/zero > "$T/zeros"
check "and grows into zeros" cmp "$T/zeros" "$M/z"

# other readers: another segment
cp "$T/a" "$M/p"
chmod 600 "$M/p"
check "a tensor of another mode is in another segment" test "$(shm_of "$M/p")" != "$(shm_of "$M/a")"
check "its bytes followed" cmp "$T/a" "$M/p"
eq "its object has its mode" 600 "$(stat -c %a "$(shm_of "$M/p")")"

# ENOSPC when the pool is spent: 8 MiB, four segments of 2 MiB
rm -f "$M/a" "$M/p" "$M/z"
for i in 1 2 3 4; do truncate -s 2M "$M/f$i"; done
eq "four 2 MiB tensors fill device 0's pool" 4 "$(ls "$M" | grep -c '^f')"
check_err "a fifth 2 MiB tensor: ENOSPC, the pool is the tier" "No space" truncate -s 2M "$M/f5"
truncate -s 2M "$M/host/h"
check_err "its move into device 0: ENOSPC, nothing changed" "No space" setfattr -n user.tensor.device -v 0 "$M/host/h"
eq "it stayed in the host tier" cpu "$(xget "$M/host/h" device)"
rm "$M/f1"
check "once one goes, a tensor of its key fits again" truncate -s 2M "$M/f5"
umount_tfs "$M"

# --max-bytes above the pool: fresh memory beyond it
mount_tfs "$M" --backend host -o host_devices=1 --preallocate 0:4M --max-bytes 0:8M || exit 1
for i in 1 2 3; do truncate -s 2M "$M/g$i"; done
eq "beyond the 4 MiB pool, up to --max-bytes 8 MiB" 3 "$(ls "$M" | grep -c '^g')"
eq "the pool grew by what was made" $((6 << 20)) "$(stat_of 0 preallocated)"
check_err "past --max-bytes: ENOSPC" "No space" truncate -s 4M "$M/g4"
umount_tfs "$M"

mkdir -p "$T/x"
check_err "--preallocate 4M (no tier): refused" "not a list" timeout 30 "$TFS" -f --redis "$URL" --backend host -o host_devices=1 --preallocate 4M "$T/x"
check_err "--preallocate above --max-bytes: refused" "more than --max-bytes" timeout 30 "$TFS" -f --redis "$URL" --backend host -o host_devices=1 --preallocate 0:8M --max-bytes 0:4M "$T/x"
check_err "--preallocate of a device not there: refused" "no device 3" timeout 30 "$TFS" -f --redis "$URL" --backend host -o host_devices=1 --preallocate 3:4M "$T/x"
check_err "--preallocate cpu where no host tier is served: refused" "serves no host tier" timeout 30 "$TFS" -f --redis "$URL" --backend host --preallocate cpu:4M "$T/x"
finish
