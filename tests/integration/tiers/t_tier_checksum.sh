# A tensor asleep in the host tier carries the checksum of its bytes, taken as they were
# copied there; a wake checks it (docs/tiers.md). A byte changed in host memory while it
# sleeps, through the shared-memory object and not through the mount, makes the wake fail
# with EBADMSG, a log line naming the tensor, and the tensor asleep and as it is. A tensor
# opened for writing while asleep has no checksum left to refuse its writers' bytes.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
cd "$T" || exit 1
M=$T/m
mount_tfs "$M" --backend host -o host_devices=1 || exit 1

# A writer still open at the sleep leaves it unchecked, and the kernel sends cp's release
# after close returns: the sleep waits until the daemon has seen it (refcount: the name).
released() { soon test "$(rcli hget tensorfs:tensor:w refcount)" = 1; }
head -c $((5 << 20)) /dev/urandom > "$T/bytes"
cp "$T/bytes" "$M/w"
check "cp's file released" released
check "sleep: to the host tier" setfattr -n user.tensor.device -v cpu "$M/w"
shm=$(shm_of "$M/w")
check "the shared-memory object exists" test -f "$shm"
printf 'X' | cmp -s - <(tail -c +$((3 << 20)) "$T/bytes" | head -c 1) && c=Y || c=X
printf '%s' "$c" | dd of="$shm" bs=1 seek=$((3 << 20)) conv=notrunc status=none
cp "$T/bytes" "$T/changed"
printf '%s' "$c" | dd of="$T/changed" bs=1 seek=$((3 << 20)) conv=notrunc status=none
check_err "a wake after a byte changed in host memory: EBADMSG" "Bad message" \
	setfattr -n user.tensor.device -v 0 "$M/w"
eq "the tensor stays asleep" cpu "$(xget "$M/w" device)"
check "in the same object" test "$(shm_of "$M/w")" = "$shm"
check "its bytes as they are" cmp "$T/changed" "$M/w"
check "the log names the tensor" grep -q "error: w: its bytes in host memory are not those that went to sleep" "$T/m.log"
check_err "a second wake is refused the same way" "Bad message" \
	setfattr -n user.tensor.device -v 0 "$M/w"

# Opened for writing while asleep: its writers may change it, so the wake is unchecked.
cp "$T/bytes" "$M/w"
eq "the checksum is gone once it is opened for writing" 0 "$(rcli hget tensorfs:tensor:w sum)"
check "the wake then succeeds" setfattr -n user.tensor.device -v 0 "$M/w"
check "with the bytes written while asleep" cmp "$T/bytes" "$M/w"

# Slept and woken untouched, several times: never refused.
released
for i in 1 2 3; do
	setfattr -n user.tensor.device -v cpu "$M/w" && setfattr -n user.tensor.device -v 0 "$M/w" || break
done
check "three untouched sleeps and wakes succeed" cmp "$T/bytes" "$M/w"
eq "awake on device 0" 0 "$(xget "$M/w" device)"
umount_tfs "$M"
finish
