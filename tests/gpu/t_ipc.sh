# A separate CUDA process maps the handle read from the xattrs: it sees bytes written with
# cp and dd as soon as write() returned; the daemon runs on the cuda backend, also when it
# forks into the background (CUDA starts after the fork); --device and user.tensor.device.
. "$(dirname "$0")/gpulib.sh"
gpu_tests "consumer process reads bytes written with cp through the IPC handle" \
	"consumer sees a dd write right after write() returns" "daemonised mount on cuda" \
	"--device and user.tensor.device"
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 --device 0 || exit 1
cd "$T"

head -c 5000000 /dev/urandom > "$T/rand"
check "cp a 5 MB file in" cp "$T/rand" "$M/w"
eq "ipc_handle is 64 raw bytes" 64 "$(getfattr --only-values -n user.tensor.ipc_handle "$M/w" | wc -c)"
eq "device xattr 0" 0 "$(xget "$M/w" device)"
check "consumer process reads bytes written with cp through the IPC handle" \
	bash -c "'$CONSUMER' dump '$(cons_handle "$M/w")' '$(xget "$M/w" ipc_offset)' 5000000 0 | cmp - '$T/rand'"
check "the consumer's view equals read()" bash -c "cmp <(cat '$M/w') '$T/rand'"
# coherence after write(): overwrite the middle, then map at once
head -c 1048576 /dev/urandom > "$T/mid"
dd if="$T/mid" of="$M/w" bs=1M seek=2 conv=notrunc status=none
{ head -c 2097152 "$T/rand"; cat "$T/mid"; tail -c +3145729 "$T/rand"; } > "$T/expect"
check "consumer sees a dd write right after write() returns" bash -c "dump '$M/w' | cmp - '$T/expect'"
# a small write inside a pooled tensor
printf 'hello tensor' > "$M/s"
check "small pooled tensor through handle + offset" bash -c "[ \"\$(dump '$M/s')\" = 'hello tensor' ]"
# a tensor shaped with setfattr is zero on the device too
touch "$M/z"; setfattr -n user.tensor.dtype -v f32 "$M/z"; setfattr -n user.tensor.shape -v '[1000,1000]' "$M/z"
check "shaped tensor is zero on the device" "$CONSUMER" zero "$(cons_handle "$M/z")" "$(xget "$M/z" ipc_offset)" 4000000 0
truncate -s 2000 "$M/w"
truncate -s 8000000 "$M/w"
check "growth by truncate is zero on the device" bash -c "dump '$M/w' | cmp - <(head -c 2000 '$T/rand'; head -c 7998000 /dev/zero)"

# --device and user.tensor.device
ndev=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
check_err "user.tensor.device $ndev, one past the last GPU: EINVAL" "Invalid argument" setfattr -n user.tensor.device -v "$ndev" "$M/z"
mkdir "$M/d"
check "directory default device 0" setfattr -n user.tensor.device -v 0 "$M/d"
check "--device and user.tensor.device" bash -c "echo x > '$M/d/f' && [ \"\$(getfattr --only-values -n user.tensor.device '$M/d/f')\" = 0 ]"
mkdir -p "$T/nodev"
ndev=$(nvidia-smi -L 2>/dev/null | wc -l)
check_err "--device beyond the GPUs fails clearly" "device" "$TFS" -f --redis "$URL" --device "$((ndev > 0 ? ndev : 1))" "$T/nodev"

# daemonised (no -f): CUDA starts in the background child
D=$T/bg
mkdir -p "$D"
check "daemonised mount on cuda" "$TFS" --redis "$URL" --node n2 --log "$T/bg.log" "$D"
check "daemonised daemon serves GPU bytes" bash -c "cp '$T/mid' '$D/b' && cmp '$D/b' '$T/mid' && dump '$D/b' | cmp - '$T/mid'"
check "daemonised daemon logged the cuda backend" grep -q "backend cuda" "$T/bg.log"
rm -f "$D/b"
check "daemonised mount unmounts" fusermount3 -u "$D"
rm -rf "$M"/*
cd /
finish
