# Tensors larger than a segment in preallocated pools on the cuda backend
# (docs/tiers.md#preallocation, fs/mem/pool.h's layout): --preallocate 0:1G,cpu:1G makes
# each pool of segments of 128 MiB as a run of 4 (512 MiB, one block or object) and 4
# single segments. A 384 MiB tensor (3 segments) created on GPU 0 is carved from the run:
# the next tensor of its key lies behind it in the same block (same handle, offset 384 MiB),
# and the device's reservation is unchanged. It sleeps into the host tier's run (an object
# of 512 MiB, registered with the driver once; no object made), wakes back into the GPU's
# run, sleeps again into the same object, and survives the daemon's SIGKILL; its bytes
# are right through the mount and through a CUDA process's handle at every step.
. "$(dirname "$0")/gpulib.sh"
gpu_tests "a GPU tensor of 3 segments is carved from the GPU pool's run" \
	"it sleeps into the host pool's run and wakes, same bytes, no new object" \
	"the runs survive the daemon's SIGKILL"
EXPECT_RESTARTS=1
start_redis || exit 1
M=$T/m
cd "$T"
# --memory vmm: a GPU's reservation is of legacy blocks, which VMM tensors never use, so
# the daemon refuses to make it; the rest of this test is the default mode's.
if [ "${TFS_TEST_MEMORY:-ipc}" = vmm ]; then
	check "--memory vmm refuses --preallocate 0:1G,cpu:1G, saying why" \
		vmm_refuses_gpu_prealloc "$M" 0:1G,cpu:1G
	for n in "a GPU tensor of 3 segments is carved from the GPU pool's run" \
		"it sleeps into the host pool's run and wakes, same bytes, no new object" \
		"the runs survive the daemon's SIGKILL"; do
		echo "skip - $n: not in --memory vmm: a GPU's reservation is of legacy blocks"
	done
	finish
	exit $((FAILS > 0))
fi
mount_cuda "$M" --node n1 --preallocate 0:1G,cpu:1G || exit 1
tstat() { tier_stat "$M" "$1" "$2"; }
objects() { find "$KDIR" -type f -name '[!.]*' | wc -l; }
check "the host pool's segments were registered with the driver" not grep -q "could not be registered" "$T/m.log"
eq "GPU 0's pool: 1 GiB" $((1 << 30)) "$(tstat 0 preallocated)"
eq "the host tier's pool: 1 GiB" $((1 << 30)) "$(tstat cpu preallocated)"
head -c $((384 << 20)) /dev/urandom > "$T/big"
t0=$(date +%s%N)
truncate -s 384M "$M/w"; rc=$?
t1=$(date +%s%N)
echo "# create of a 384 MiB tensor (3 segments) on GPU 0 from its pool: $(( (t1 - t0) / 1000 )) us (truncate, through FUSE)"
dd if="$T/big" of="$M/w" bs=4M conv=notrunc status=none
truncate -s 64M "$M/x"
if [ $rc = 0 ] && [ "$(hexh "$M/w")" = "$(hexh "$M/x")" ] && [ "$(xget "$M/x" ipc_offset)" = $((384 << 20)) ] &&
   [ "$(xget "$M/w" ipc_offset)" = 0 ] && [ "$(tstat 0 preallocated)" = $((1 << 30)) ] &&
   cmp -s "$T/big" "$M/w" && dump "$M/w" | cmp -s - "$T/big"; then
	ok "a GPU tensor of 3 segments is carved from the GPU pool's run"
else
	nok "a GPU tensor of 3 segments is carved from the GPU pool's run (rc $rc, offsets $(xget "$M/w" ipc_offset) $(xget "$M/x" ipc_offset), same handle: $([ "$(hexh "$M/w")" = "$(hexh "$M/x")" ] && echo yes), preallocated $(tstat 0 preallocated))"
fi

truncate -s 4096 "$M/probe"
setfattr -n user.tensor.device -v cpu "$M/probe"
KDIR=$(dirname "$(shm_of "$M/probe")")
n0=$(objects)
t0=$(date +%s%N)
setfattr -n user.tensor.device -v cpu "$M/w"; s1=$?
t1=$(date +%s%N)
echo "# sleep of 384 MiB into the host pool's run: $(( (t1 - t0) / 1000000 )) ms"
run=$(shm_of "$M/w")
size1=$(stat -c %s "$run"); n1=$(objects)
c1=$(cmp -s "$T/big" "$M/w" && echo same)
setfattr -n user.tensor.device -v 0 "$M/w"; s2=$?
d2=$(dump "$M/w" | cmp -s - "$T/big" && echo same)
t0=$(date +%s%N)
setfattr -n user.tensor.device -v cpu "$M/w"; s3=$?
t1=$(date +%s%N)
echo "# second sleep of 384 MiB: $(( (t1 - t0) / 1000000 )) ms"
if [ "$s1$s2$s3" = 000 ] && [ "$size1" = $((512 << 20)) ] && [ "$n1" = "$n0" ] && [ "$(objects)" = "$n0" ] &&
   [ "$(shm_of "$M/w")" = "$run" ] && [ "$c1$d2" = samesame ] && cmp -s "$T/big" "$M/w" &&
   [ "$(tstat cpu preallocated)" = $((1 << 30)) ]; then
	ok "it sleeps into the host pool's run and wakes, same bytes, no new object"
else
	nok "it sleeps into the host pool's run and wakes, same bytes, no new object (moves $s1$s2$s3, object of $size1 bytes, objects $n0 $n1 $(objects), bytes: $c1 $d2)"
fi

d=$(daemon_pid "$M")
kill -9 "$d"
for _ in $(seq 1200); do
	d2=$(daemon_pid "$M")
	[ -n "$d2" ] && [ "$d2" != "$d" ] && mountpoint -q "$M" && stat -f "$M" >/dev/null 2>&1 && break
	sleep 0.05
done
if cmp -s "$T/big" "$M/w" && [ "$(shm_of "$M/w")" = "$run" ] && [ "$(objects)" = "$n0" ] &&
   [ "$(tstat cpu preallocated)" = $((1 << 30)) ] && [ "$(tstat 0 preallocated)" = $((1 << 30)) ] &&
   setfattr -n user.tensor.device -v 0 "$M/w" && dump "$M/w" | cmp -s - "$T/big"; then
	ok "the runs survive the daemon's SIGKILL"
else
	nok "the runs survive the daemon's SIGKILL (objects $n0 -> $(objects), preallocated cpu $(tstat cpu preallocated) gpu $(tstat 0 preallocated))"
fi
umount_tfs "$M"
finish
