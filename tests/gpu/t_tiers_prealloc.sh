# --preallocate cpu:SIZE on the cuda backend (docs/tiers.md#preallocation): the host tier's
# pool is reserved at start and registered with the driver once (no warning that it could
# not be); a sleep carves the tensor from it (no new object in /dev/shm) and a wake reads
# it back, bytes equal through the mount and through a CUDA process's handle; a second
# sleep finds the same segments; the reservation survives the daemon's SIGKILL. And a GPU's
# pool (--preallocate 0:8G): reserved at start and reported, a 1 GiB create drawn from it
# (its time printed: the target is 1 ms), its bytes written and read back.
. "$(dirname "$0")/gpulib.sh"
gpu_tests "sleep and wake through the registered pool: same bytes, no new object" \
	"the pool survives the daemon's SIGKILL" "a GPU's pool: reserved, a 1 GiB create drawn from it"
EXPECT_RESTARTS=1
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 --preallocate cpu:2G || exit 1
cd "$T"
cpu_stat() { tier_stat "$M" cpu "$1"; }
eq "the host tier's pool: 2 GiB" $((2 << 30)) "$(cpu_stat preallocated)"
check "its segments were registered with the driver" not grep -q "could not be registered" "$T/m.log"
# 192 MiB: within one segment (an eighth of the pool); a larger tensor takes a run of
# segments (t_tiers_prealloc_run.sh)
head -c $((192 << 20)) /dev/urandom > "$T/big"
cp "$T/big" "$M/w"
truncate -s 4096 "$M/probe"
setfattr -n user.tensor.device -v cpu "$M/probe"
KDIR=$(dirname "$(shm_of "$M/probe")")
n0=$(find "$KDIR" -type f -name '[!.]*' | wc -l)
t0=$(date +%s%N)
setfattr -n user.tensor.device -v cpu "$M/w"; s1=$?
t1=$(date +%s%N)
echo "# sleep of 192 MiB into the pool: $(( (t1 - t0) / 1000000 )) ms"
same=$([ "$n0" = "$(find "$KDIR" -type f -name '[!.]*' | wc -l)" ] && echo yes)
check "the bytes asleep" cmp "$T/big" "$M/w"
setfattr -n user.tensor.device -v 0 "$M/w"; s2=$?
dump "$M/w" > "$T/dumped"
t0=$(date +%s%N)
setfattr -n user.tensor.device -v cpu "$M/w"; s3=$?
t1=$(date +%s%N)
echo "# second sleep of 192 MiB: $(( (t1 - t0) / 1000000 )) ms"
setfattr -n user.tensor.device -v 0 "$M/w"; s4=$?
if [ "$s1$s2$s3$s4" = 0000 ] && [ "$same" = yes ] && cmp -s "$T/big" "$T/dumped" && cmp -s "$T/big" "$M/w"; then
	ok "sleep and wake through the registered pool: same bytes, no new object"
else
	nok "sleep and wake through the registered pool: same bytes, no new object ($s1$s2$s3$s4, same: $same)"
fi
setfattr -n user.tensor.device -v cpu "$M/w"
if kill9_and_serve "$M" && [ "$(cpu_stat preallocated)" = $((2 << 30)) ] && cmp -s "$T/big" "$M/w" &&
   setfattr -n user.tensor.device -v 0 "$M/w" && cmp -s "$T/big" "$M/w"; then
	ok "the pool survives the daemon's SIGKILL"
else
	nok "the pool survives the daemon's SIGKILL"
fi
umount_tfs "$M"
# --memory vmm: a GPU's reservation is of legacy blocks, which VMM tensors never use, so
# the daemon refuses to make it.
if [ "${TFS_TEST_MEMORY:-ipc}" = vmm ]; then
	check "--memory vmm refuses --preallocate 0:8G, saying why" \
		vmm_refuses_gpu_prealloc "$M" 0:8G,cpu:1G
	echo "skip - a GPU's pool: reserved, a 1 GiB create drawn from it: not in --memory vmm: a GPU's reservation is of legacy blocks"
	finish
	exit $((FAILS > 0))
fi
# 8 GiB: segments of 1 GiB, so the 1 GiB tensor is drawn from one
mount_cuda "$M" --node n1 --preallocate 0:8G,cpu:1G || exit 1
dev0() { tier_stat "$M" 0 "$1"; }
p0=$(dev0 preallocated)
t0=$(date +%s%N)
truncate -s 1G "$M/g"; rc=$?
t1=$(date +%s%N)
echo "# create of a 1 GiB tensor on GPU 0 from its pool: $(( (t1 - t0) / 1000 )) us (truncate, through FUSE)"
head -c $((64 << 20)) /dev/urandom > "$T/part"
dd if="$T/part" of="$M/g" bs=1M conv=notrunc status=none
if [ "$p0" = $((8 << 30)) ] && [ $rc = 0 ] && [ "$(dev0 preallocated)" = $((8 << 30)) ] &&
   cmp -s "$T/part" <(head -c $((64 << 20)) "$M/g"); then
	ok "a GPU's pool: reserved, a 1 GiB create drawn from it"
else
	nok "a GPU's pool: reserved, a 1 GiB create drawn from it (preallocated $p0, then $(dev0 preallocated); rc $rc)"
fi
umount_tfs "$M"
finish
