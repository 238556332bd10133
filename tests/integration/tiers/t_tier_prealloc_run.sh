# A tensor larger than a segment in a preallocated host tier (docs/tiers.md#preallocation,
# fs/mem/pool.h's layout): --preallocate cpu:16M is a run of 4 segments of 2 MiB (one
# object) and 4 single segments. A tensor of 3 segments is carved from the run: no object
# made (the keeper's directory holds the same objects), the stats attribute's
# "preallocated" unchanged, its handle names the run at offset 0 and maps its bytes. A wake
# to device 0 frees it back to the run and a sleep finds it there again (same object, same
# offset); a SIGKILL of the daemon keeps it whole, the same objects; after it, the run is
# reused by the next such tensor. Fragmentation: another key's tensor of 3 segments finds no
# idle run, so it gets an object of its own, the idle segments given back first to make
# room under the tier's cap (the pool is the tier), and a third key's is ENOSPC.
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../crash/holders.sh"
start_redis || exit 1
cd "$T" || exit 1
M=$T/m
stat_of() { tier_stat "$M" "$@"; }
# the pool's objects (not a keeper's mark, .keeper.PID)
objects() { find "$KDIR" -type f -name '[!.]*' | sort; }
mount_tfs "$M" --backend host -o host_devices=1 --preallocate cpu:16M || exit 1
mkdir "$M/host"
setfattr -n user.tensor.device -v cpu "$M/host"
printf 'probe' > "$M/host/probe"
KDIR=$(dirname "$(shm_of "$M/host/probe")")
eq "the host tier's pool: 16 MiB" $((16 << 20)) "$(stat_of cpu preallocated)"
eq "laid out as a run of 4 segments and 4 single segments: 5 objects" 5 "$(objects | wc -l)"
objects > "$T/objects.0"
one=$(shm_of "$M/host/probe")
eq "a small tensor took a single segment" $((2 << 20)) "$(stat -c %s "$one")"

# 6 MiB: three segments
head -c $((6 << 20)) /dev/urandom > "$T/big"
truncate -s 6M "$M/host/big"
dd if="$T/big" of="$M/host/big" bs=1M conv=notrunc status=none
run=$(shm_of "$M/host/big")
eq "a tensor of 3 segments lies in the run (an object of 8 MiB)" $((8 << 20)) "$(stat -c %s "$run")"
eq "at its start" 0 "$(xget "$M/host/big" ipc_offset)"
eq "the run has its key's owner and mode" "$(stat -c '%u %a' "$M/host/big")" "$(stat -c '%u %a' "$run")"
objects > "$T/objects.now"
check "no object made" cmp "$T/objects.0" "$T/objects.now"
eq "the pool is still 16 MiB" $((16 << 20)) "$(stat_of cpu preallocated)"
eq "the tier counts its bytes used" $(((6 << 20) + 5)) "$(stat_of cpu used)"
check "its bytes" cmp "$T/big" "$M/host/big"
map_dump "$M/host/big" > "$T/big.mapped"
check "a process maps it by its handle and reads its bytes" cmp "$T/big" "$T/big.mapped"

# freed back to the run and found there again
check "it wakes on device 0" setfattr -n user.tensor.device -v 0 "$M/host/big"
check "its bytes on device 0" cmp "$T/big" "$M/host/big"
check "it sleeps again" setfattr -n user.tensor.device -v cpu "$M/host/big"
eq "into the same run" "$run" "$(shm_of "$M/host/big")"
eq "at the same offset" 0 "$(xget "$M/host/big" ipc_offset)"
check "device 0's object goes, and no object is made" soon eval 'objects | cmp -s - "$T/objects.0"'
check "its bytes after the round trip" cmp "$T/big" "$M/host/big"

# the daemon's SIGKILL
check "the daemon starts again after its SIGKILL" kill_daemon "$M"
check "the tensor is whole after the restart" cmp "$T/big" "$M/host/big"
eq "in the same run" "$run" "$(shm_of "$M/host/big")"
map_dump "$M/host/big" > "$T/big.mapped"
check "and through its handle" cmp "$T/big" "$T/big.mapped"
objects > "$T/objects.now"
check "the same objects: none made, none freed" cmp "$T/objects.0" "$T/objects.now"
eq "the pool is 16 MiB" $((16 << 20)) "$(stat_of cpu preallocated)"
rm "$M/host/big"
check "its memory goes back to the pool" soon eval '[ "$(stat_of cpu used)" = 5 ]'
eq "a freed tensor's run stays with its key" 5 "$(objects | wc -l)"
head -c $((5 << 20)) /dev/urandom > "$T/big2"
cp "$T/big2" "$M/host/big2"
eq "the next large tensor of its key reuses the run" "$run" "$(shm_of "$M/host/big2")"
objects > "$T/objects.now"
check "still no object made" cmp "$T/objects.0" "$T/objects.now"
check "its bytes" cmp "$T/big2" "$M/host/big2"

# no idle run for another key: fresh memory, idle segments given back to make room
mkdir "$M/other" "$M/third"
setfattr -n user.tensor.device -v cpu "$M/other"
setfattr -n user.tensor.device -v cpu "$M/third"
truncate -s 6M "$M/other/big"
dd if="$T/big" of="$M/other/big" bs=1M conv=notrunc status=none
own=$(shm_of "$M/other/big")
check "another directory's tensor is not in the run" test "$own" != "$run"
eq "it has an object of its own, 6 MiB" $((6 << 20)) "$(stat -c %s "$own")"
eq "made in place of the 3 idle segments: 3 objects" 3 "$(objects | wc -l)"
eq "the tier still holds 16 MiB, its cap" $((16 << 20)) "$(stat_of cpu preallocated)"
check "its bytes" cmp "$T/big" "$M/other/big"
check_err "a third directory's 6 MiB tensor: no run, no room: ENOSPC" "No space" truncate -s 6M "$M/third/big"
check "the others are whole" sh -c "cmp '$T/big' '$M/other/big' && cmp '$T/big2' '$M/host/big2'"
finish
