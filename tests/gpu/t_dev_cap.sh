# --max-bytes for one GPU (0:64M): a tensor past that device's cap is ENOSPC and changes
# nothing, in either memory mode (TFS_TEST_MEMORY; a VMM allocation and each chunk of a
# growth in place count against the same cap as legacy blocks); freeing makes room again,
# small tensors' freed blocks too (the pool keeps them cached: a large create that finds
# the cap reached gives them back first).
. "$(dirname "$0")/gpulib.sh"
gpu_tests "device cap: a tensor within the cap is made" \
	"device cap: a second past the device's cap: ENOSPC" \
	"device cap: a growth past the device's cap: ENOSPC" \
	"device cap: after a free the second fits" \
	"device cap: small tensors' freed blocks make room"
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 --max-bytes 0:64M || exit 1
mkdir "$M/on0" && setfattr -n user.tensor.device -v 0 "$M/on0"
head -c 1000000 /dev/urandom > "$T/r"
check "device cap: a tensor within the cap is made" truncate -s 40000000 "$M/on0/a"
dd if="$T/r" of="$M/on0/a" conv=notrunc status=none
check_err "device cap: a second past the device's cap: ENOSPC" "No space" \
	truncate -s 40000000 "$M/on0/b"
eq "the refused tensor is empty" 0 "$(stat -c %s "$M/on0/b" 2>/dev/null || echo 0)"
# 40 and 20 MB held: growing the first to 50 MB (a chunk of 8 MiB more in vmm mode, a new
# allocation beside the old in the legacy one) passes 64 MiB, where in vmm mode it alone
# would fit (past the cap itself a size is EFBIG, docs/files.md)
check "a 20 MB tensor beside it" truncate -s 20000000 "$M/on0/c"
check_err "device cap: a growth past the device's cap: ENOSPC" "No space" \
	truncate -s 50000000 "$M/on0/a"
eq "the tensor keeps its size" 40000000 "$(stat -c %s "$M/on0/a")"
eq "and its bytes" "$(md5sum < "$T/r")" "$(head -c 1000000 "$M/on0/a" | md5sum)"
rm -f "$M/on0/a"
check "device cap: after a free the second fits" truncate -s 40000000 "$M/on0/b"
# 30 small tensors (vmm mode: packed 2 to a 2 MiB block, 30 MiB of blocks; legacy: one
# 32 MiB block), all removed: a 40 MB tensor then fits
rm -f "$M/on0/b" "$M/on0/c"
for i in $(seq 30); do head -c 1000000 "$T/r" > "$M/on0/s$i" || break; done
eq "30 small tensors made" 30 "$(ls "$M/on0" | grep -c '^s')"
rm -f "$M/on0"/s*
check "device cap: small tensors' freed blocks make room" truncate -s 40000000 "$M/on0/d"
cd /
finish
