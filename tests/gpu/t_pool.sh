# Pooled small tensors: 10,000 tensors of 4 KiB share 2 MiB blocks (ipc_offset non-zero),
# cost about 40 MiB of device memory, not 10,000 x 2 MiB, and each reads back correctly
# through handle + offset; freed memory is reused.
. "$(dirname "$0")/gpulib.sh"
gpu_tests "10,000 tensors of 4 KiB cost ~40 MiB (pooled)" \
	"pooled small tensors read back correctly through handle + offset" "freed pool memory is reused"
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 || exit 1
cd "$T"
mkdir "$M/p"
u0=$(used_bytes "$M")
check "create 10,000 tensors of 4 KiB" python3 -c "
import os
for i in range(10000):
    with open('$M/p/t%05d' % i, 'wb') as f:
        f.write(i.to_bytes(8, 'little') * 512)
"
u1=$(used_bytes "$M")
echo "# statfs used: $u0 -> $u1 bytes for 10,000 x 4 KiB ($((10000 * 4096)) requested)"
check "10,000 tensors of 4 KiB cost ~40 MiB (pooled)" test $((u1 - u0)) -le $((10000 * 4096 * 11 / 10 + 8 * 1048576))
eq "sizes" 4096 "$(size_of "$M/p/t09999")"
nz=0; handles=
for i in 0 1 2 3 500 511 512 513 4000 9998 9999; do
	f=$M/p/t$(printf %05d $i)
	[ "$(xget "$f" ipc_offset)" != 0 ] && nz=$((nz + 1))
	handles+="$(hexh "$f")"$'\n'
done
check "most pooled tensors have ipc_offset != 0" test $nz -ge 9
nh=$(printf '%s' "$handles" | sort -u | wc -l)
check "pooled tensors share handles ($nh distinct for 11 tensors)" test "$nh" -lt 11
bad=0
for i in 0 1 2 3 500 511 512 513 4000 9998 9999; do
	f=$M/p/t$(printf %05d $i)
	dump "$f" | cmp -s - "$f" || { bad=$((bad + 1)); echo "    t$i differs through handle + offset"; }
done
eq "pooled small tensors read back correctly through handle + offset (C consumer, 11 samples)" 0 $bad
if [ "$MEM_MODE" = vmm ]; then
	echo "skip - all 10,000 through handle + offset (CuPy): not in --memory vmm: CuPy's ipcOpenMemHandle opens legacy IPC handles only"
elif python3 -c "import cupy" 2>/dev/null; then
	check "all 10,000 read back correctly through handle + offset (CuPy)" bash -o pipefail -c "python3 '$GROOT/tests/gpu/cupy_consumer.py' check '$M'/p/t* | tail -1"
else
	echo "skip - all 10,000 through handle + offset (CuPy): python3 has no cupy"
fi
check "rm the 10,000" rm -rf "$M/p"
sleep 0.3
u2=$(used_bytes "$M")
eq "statfs used back to where it was" "$u0" "$u2"
check "freed pool memory is reused" python3 -c "
import os
os.mkdir('$M/q')
for i in range(2000):
    with open('$M/q/t%05d' % i, 'wb') as f:
        f.write(b'x' * 4096)
"
st=$(grep -c "cudaMalloc" "$T/m.log")
check "no cudaMalloc failure logged" test "$st" = 0
rm -rf "$M/q"
cd /
finish
