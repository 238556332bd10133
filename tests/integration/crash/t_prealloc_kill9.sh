# --preallocate's pools survive crashes (docs/tiers.md#preallocation): their segments are
# the keeper's objects like every tensor's. SIGKILL of the daemon: the one the keeper starts
# again takes back the segments its records name and the idle ones of the reserve, makes
# no new object, frees none, and serves the tensors whole from where they were. (A
# segment once given to a key and empty at the crash is freed and the reserve made whole
# with a new one: its key's readers may still map it.) SIGKILL of
# the keeper (two holders, fs/mem/keeper/handover.h), then of the daemon: the same.
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/holders.sh"
start_redis || exit 1
cd "$T" || exit 1
M=$T/m
stat_of() { tier_stat "$M" "$@"; }
mount_tfs "$M" --backend host -o host_devices=1 --preallocate cpu:16M,0:8M || exit 1
mkdir "$M/host"
setfattr -n user.tensor.device -v cpu "$M/host"
for i in 1 2 3; do
	head -c $((300 << 10)) /dev/urandom > "$T/d$i"
	head -c $((700 << 10)) /dev/urandom > "$T/h$i"
	cp "$T/d$i" "$M/d$i"
	cp "$T/h$i" "$M/host/h$i"
done
KDIR=$(dirname "$(shm_of "$M/d1")")
# the objects, not a keeper's mark (.keeper.PID, shm_sweep.h)
objects() { find "$KDIR" -type f -name '[!.]*' | sort; }
objects > "$T/objects.0"
# each pool: runs for half of it, single segments for the rest (fs/mem/pool.h)
eq "the keeper holds the 8 pieces of the two pools (5 + 3)" 8 "$(wc -l < "$T/objects.0")"
whole() {
	local i bad=0
	for i in 1 2 3; do
		cmp -s "$T/d$i" "$M/d$i" || { echo "d$i differs"; bad=1; }
		cmp -s "$T/h$i" "$M/host/h$i" || { echo "h$i differs"; bad=1; }
		[ "$(xget "$M/host/h$i" device)" = cpu ] || { echo "h$i not on cpu"; bad=1; }
	done
	map_dump "$M/d2" | cmp -s - "$T/d2" || { echo "d2 through its handle differs"; bad=1; }
	return $bad
}
after() {
	check "$1: every tensor whole where it was" whole
	eq "$1: the host tier's pool is 16 MiB" $((16 << 20)) "$(stat_of cpu preallocated)"
	eq "$1: device 0's pool is 8 MiB" $((8 << 20)) "$(stat_of 0 preallocated)"
	objects > "$T/objects.now"
	check "$1: the same objects, none made, none freed" cmp "$T/objects.0" "$T/objects.now"
	truncate -s 1M "$M/host/new.$2"
	eq "$1: a create draws from the pool" 8 "$(objects | wc -l)"
	rm "$M/host/new.$2"
}
check "the daemon starts again after its SIGKILL" kill_daemon "$M"
after "daemon killed" 1
check "the keeper is replaced after its SIGKILL" kill_keeper "$M"
after "keeper killed" 2
check "the daemon starts again after its SIGKILL, from the new keeper" kill_daemon "$M"
after "keeper then daemon killed" 3
check "a sleep and a wake after the restarts" sh -c "setfattr -n user.tensor.device -v cpu '$M/d1' && setfattr -n user.tensor.device -v 0 '$M/d1' && cmp '$T/d1' '$M/d1'"
k=$(keeper_of "$M"); d=$(daemon_of "$M")
if [ -n "${MNT_PID[$M]:-}" ]; then umount_tfs "$M"; else fusermount3 -u "$M"; fi
for _ in $(seq 400); do kill -0 "$k" 2>/dev/null || kill -0 "$d" 2>/dev/null || break; sleep 0.05; done
check "the daemon and its keeper end at the unmount" bash -c "! kill -0 $k 2>/dev/null && ! kill -0 $d 2>/dev/null"
check "the pools go with them: nothing left in /dev/shm" not test -e "$KDIR"
finish
