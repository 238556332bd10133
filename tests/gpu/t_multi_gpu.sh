# Every GPU of the machine in one mount (issue 18): placement on each device, a kernel on
# GPU 0 in another process writing a tensor that lives on GPU 1 through its handle (opened
# in GPU 0's context with the lazy peer flag), the library opening a tensor of GPU 1 on its
# own device for a process whose current device is 0, moving a tensor between devices
# (copied by the memory keeper, and EBUSY while another process holds it), statfs per device, a pool per device whose
# ENOSPC leaves the others alone, and --devices. Needs two GPUs: with one, every case is
# reported as skipped.
. "$(dirname "$0")/gpulib.sh"
NAMES=("a tensor placed on each device holds its bytes there" \
	"a kernel on GPU 0 in another process writes a tensor on GPU 1" \
	"the library maps a GPU 1 tensor on GPU 1 for a process whose device is 0" \
	"moving a tensor to another device keeps its bytes and changes its handle" \
	"the process that maps both sides did the copy (peer access): the keeper, or the daemon in vmm" \
	"a move is refused with EBUSY while another process holds the tensor" \
	"statfs per device" "a full device leaves the others' pools alone" \
	"--devices limits where tensors may live")
gpu_tests "${NAMES[@]}"
ndev=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "$ndev" -lt 2 ]; then
	for n in "${NAMES[@]}"; do echo "skip - $n: $ndev GPU(s), needs 2"; done
	exit 0
fi
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 --max-bytes 1G || exit 1
cd "$T" || exit 1
head -c $((8 << 20)) /dev/urandom > rand

ok_all=1
for i in $(seq 0 $((ndev - 1))); do
	mkdir "$M/d$i"
	setfattr -n user.tensor.device -v "$i" "$M/d$i"
	cp rand "$M/d$i/t"
	[ "$(xget "$M/d$i/t" device)" = "$i" ] || { ok_all=0; echo "# d$i/t: device $(xget "$M/d$i/t" device)"; }
	"$CONSUMER" dump "$(cons_handle "$M/d$i/t")" "$(xget "$M/d$i/t" ipc_offset)" $((8 << 20)) 0 "$i" | cmp -s - rand ||
		{ ok_all=0; echo "# d$i/t: bytes through the handle on device $i differ"; }
done
eq "a tensor placed on each device holds its bytes there" 1 $ok_all

truncate -s $((4 << 20)) "$M/d1/k"
"$CONSUMER" kwrite "$(cons_handle "$M/d1/k")" "$(xget "$M/d1/k" ipc_offset)" $((4 << 20)) 7 0 > kw.out 2>&1
rc=$?
"$CONSUMER" gen 0 0 $((4 << 20)) 7 > want
check "a kernel on GPU 0 in another process writes a tensor on GPU 1" \
	bash -c "[ $rc = 0 ] && cmp want '$M/d1/k'"

cat > peer.py <<'PY'
import sys, numpy, cupy, tensorfs
path, nbytes = sys.argv[1], int(sys.argv[2])
cupy.cuda.Device(0).use()                 # the caller's current device is 0
with tensorfs.open(path) as t:
    assert t.__dlpack_device__()[1] == 1, t.__dlpack_device__()
    arr = cupy.from_dlpack(t)             # mapped on GPU 1, where the tensor lives
    with cupy.cuda.Device(1):
        s = int(arr.astype(cupy.uint64).sum())
want = int(numpy.fromfile(path, dtype=numpy.uint8).astype(numpy.uint64).sum())
print("sum", s, "want", want)
sys.exit(0 if s == want else 1)
PY
PY=${TFS_PYTHON:-python3}
if "$PY" -c 'import cupy, numpy' 2>/dev/null && pip_tensorfs "$T/pylib" pip.log; then
	check "the library maps a GPU 1 tensor on GPU 1 for a process whose device is 0" \
		env PYTHONPATH="$T/pylib" "$PY" peer.py "$M/d1/t" $((8 << 20))
else
	echo "skip - the library maps a GPU 1 tensor on GPU 1 for a process whose device is 0: no cupy, or the package did not install"
fi

head -c $((64 << 20)) /dev/urandom > big
cp big "$M/d0/m"
h0=$(hexh "$M/d0/m")
check "setfattr user.tensor.device 1 moves a tensor with memory" setfattr -n user.tensor.device -v 1 "$M/d0/m"
check "moving a tensor to another device keeps its bytes and changes its handle" bash -c \
	"[ \"\$(getfattr --only-values -n user.tensor.device '$M/d0/m')\" = 1 ] && [ '$(hexh "$M/d0/m")' != '$h0' ] &&
	 cmp big '$M/d0/m' && '$CONSUMER' dump \"\$(cons_handle '$M/d0/m')\" \"\$(getfattr --only-values -n user.tensor.ipc_offset '$M/d0/m')\" $((64 << 20)) 0 1 | cmp - big"
eq "the Redis record follows the move" 1 "$(rcli hget tensorfs:tensor:d0/m device)"
# Legacy blocks are the keeper's, so it copies; VMM memory is mapped in the daemon too.
by="by the memory keeper"
[ "$MEM_MODE" = vmm ] && by="by the daemon, VMM"
check "the process that maps both sides did the copy (peer access): the keeper, or the daemon in vmm" \
	grep -q "moved $((64 << 20)) bytes from device 0 to 1: .* ($by" "$T/m.log"
( exec 3< "$M/d0/m"; sleep 30 ) & holder=$!
sleep 0.3
check_err "a move is refused with EBUSY while another process holds the tensor" "busy" \
	setfattr -n user.tensor.device -v 0 "$M/d0/m"
kill $holder; wait $holder 2>/dev/null
check "once nobody holds it, the move back succeeds" bash -c \
	"setfattr -n user.tensor.device -v 0 '$M/d0/m' && cmp big '$M/d0/m'"

# In vmm a large move is made in pieces, each copied while the next is made: its bytes,
# the zeros past them after growth in place, and its chunks adopted after a SIGKILL.
if [ "$MEM_MODE" = vmm ]; then
	pb=$(((600 << 20) + 12345))
	head -c $pb /dev/urandom > big2
	# Made at its size first: grown by cp's appends it would pass --max-bytes on the way.
	truncate -s $pb "$M/d0/p" && dd if=big2 of="$M/d0/p" bs=16M conv=notrunc status=none
	check "vmm: a 600 MiB move is made in pieces, each copied while the next is made" bash -c \
		"setfattr -n user.tensor.device -v 1 '$M/d0/p' && cmp big2 '$M/d0/p' &&
		 grep -q 'moved $pb bytes from device 0 to 1: .* (by the daemon, VMM, [2-8] pieces)' '$T/m.log'"
	check "vmm: a consumer on GPU 0 reads the moved tensor on GPU 1" bash -c \
		"'$CONSUMER' dump \"\$(cons_handle '$M/d0/p')\" 0 $pb 0 1 | cmp - big2"
	{ cat big2; head -c $((100 << 20)) /dev/zero; } > big2g
	check "vmm: a tensor moved in pieces grows in place, its bytes kept, zeros after them" bash -c \
		"truncate -s $((pb + (100 << 20))) '$M/d0/p' && cmp big2g '$M/d0/p'"
	. "$GROOT/tests/integration/crash/holders.sh"
	EXPECT_RESTARTS=1
	kill_daemon "$M"; kd=$?
	check "vmm: its daemon's SIGKILL keeps every piece" bash -c "[ $kd = 0 ] && cmp big2g '$M/d0/p'"
	check "vmm: and it moves back whole" bash -c \
		"setfattr -n user.tensor.device -v 0 '$M/d0/p' && cmp big2g '$M/d0/p'"
	rm -f "$M/d0/p"
fi

used() { echo $(( $(stat -f -c '%b-%f' "$1") )); }
u0=$(used "$M/d0"); u1=$(used "$M/d1")
truncate -s $((256 << 20)) "$M/d1/s"
check "statfs per device" bash -c "[ $(used "$M/d0") = $u0 ] && [ \$(( \$(stat -f -c '%b-%f' '$M/d1') )) -ge $((u1 + (256 << 20) / 4096)) ]"

check_err "device 1 fills up (--max-bytes 1G per device)" "No space" truncate -s $((1 << 30)) "$M/d1/full"
check "a full device leaves the others' pools alone" truncate -s $((512 << 20)) "$M/d0/more"
umount_tfs "$M"

M2=$T/m2
mount_cuda "$M2" --node n2 --devices 1 --device 1 || exit 1
touch "$M2/x"; echo hi > "$M2/x"
check "--devices limits where tensors may live" bash -c \
	"[ \"\$(getfattr --only-values -n user.tensor.device '$M2/x')\" = 1 ] &&
	 ! setfattr -n user.tensor.device -v 0 '$M2/x' 2>/dev/null"
umount_tfs "$M2"
finish
