# Sourced by the tests of a preallocated host tier's zeroing (tiers/t_tier_prealloc_zero,
# crash/t_prealloc_zero_kill9), after lib.sh: mounts $T/m with a host tier of 16 MiB
# preallocated (2 MiB segments: a run of 4, 8 MiB, and 4 singles; fs/mem/pool.h) and the
# directory $H on it, and defines the helpers below. Exits when the mount fails.
start_redis || exit 1
cd "$T" || exit 1
M=$T/m
H=$M/h
K=1024
mount_tfs "$M" --backend host -o host_devices=1 --preallocate cpu:16M || exit 1
mkdir "$H"
setfattr -n user.tensor.device -v cpu "$H"
# ones N: N bytes of 0xff
ones() { tr '\0' '\377' < /dev/zero | head -c "$1"; }
# fill FILE: every byte of the tensor 0xff, written through the mount
fill() { ones "$(size_of "$1")" | dd of="$1" conv=notrunc bs=64K status=none; }
# zeros FILE [FROM]: the tensor reads zeros from byte FROM (0) on, through the mount and
# through its handle
zeros() {
	local n=$(( $(size_of "$1") - ${2:-0} ))
	tail -c "$n" "$1" | cmp -s -n "$n" - /dev/zero || { echo "$1 through the mount"; return 1; }
	map_dump "$1" | tail -c "$n" | cmp -s -n "$n" - /dev/zero || { echo "$1 through its handle"; return 1; }
}
# off FILE: the tensor's offset in its segment
off() { xget "$1" ipc_offset; }
