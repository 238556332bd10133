# -o io_uring with the kernel's FUSE-over-io_uring on (enable_uring Y): requests arrive
# over the rings (the stats count them), bytes and POSIX operations come out as over
# /dev/fuse, every CPU's queue serves, and the unmount ends every ring thread.
# enable_uring is global: set here, and put back as it was on every way out.
# tfs-test: alone (it sets the fuse module's enable_uring, which every mount of the machine shares)
. "$(dirname "$0")/../lib.sh"
enable_uring Y
one_mount -o io_uring
stats() { jfield "$(getfattr --only-values -n user.tensorfs.stats "$M" 2>/dev/null)" "$1"; }

check "the daemon serves over the rings" grep -q "io_uring: serving over [0-9]* queues" "$T/m.log"
printf 'over the ring\n' > "$M/a"
eq "a byte round trip" "over the ring" "$(cat "$M/a")"
n0=$(stats uring_requests)
check "requests came over the rings" test "$n0" -gt 0
stat "$M/a" >/dev/null
check "stat is served over the rings" test "$(stats uring_requests)" -gt "$n0"

check "create" touch "$M/c"
eq "stat sees its size" 0 "$(size_of "$M/c")"
check "setxattr" setfattr -n user.note -v ringed "$M/c"
eq "getxattr" ringed "$(getfattr --only-values -n user.note "$M/c" 2>/dev/null)"
check "mkdir" mkdir "$M/d"
check "rename into it" mv "$M/c" "$M/d/c2"
eq "readdir" "c2" "$(ls "$M/d")"
check "unlink" rm "$M/d/c2"
check "rmdir" rmdir "$M/d"
eq "the root lists what is left" "a" "$(ls "$M")"

head -c 64M /dev/urandom > "$T/src"
check "a 64 MiB write" dd if="$T/src" of="$M/big" bs=1M status=none
check "reads back the same bytes" cmp "$T/src" "$M/big"
eq "its size" 67108864 "$(size_of "$M/big")"

# A request goes to the queue of the CPU that made it: one from each CPU reaches each.
for cpu in $(seq 0 $(($(nproc --all) - 1))); do
	taskset -c "$cpu" true 2>/dev/null || continue
	eq "CPU $cpu's queue serves" "over the ring" "$(taskset -c "$cpu" cat "$M/a")"
done

# One thread per possible CPU's queue; the daemon exits 0 from the unmount only once it
# has joined them all (umount_tfs; a hung one would hold it until the watchdog).
queues=$(($(sed 's/.*[-,]//' /sys/devices/system/cpu/possible) + 1))
pid=$(daemon_pid "$M")
eq "a ring thread per queue" "$queues" "$(cat /proc/"$pid"/task/*/comm | grep -c '^tfs-ring-')"
umount_tfs "$M"
check "the daemon is gone" not kill -0 "$pid"
check "no ring entry failed" not grep -q "io_uring: .*failed" "$T/m.log"
restore_uring
eq "enable_uring is back as it was" "$URING_PREV" "$(cat "$URING_SWITCH")"
finish
