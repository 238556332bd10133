# rename("y", "y") while the queue removes and re-creates y: must never hang. With
# libfuse's high-level API the kernel's RENAME y->y (its two lookups saw different
# dentries) deadlocked in libfuse's path locks and left the directory locked (issue 13).
# RACE_SECONDS (default 60) sets how long the two loops run.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
secs=${RACE_SECONDS:-60}

# The queue client: create and delete y as fast as one connection allows, no replies.
queue_loop() {
	local end=$((SECONDS + secs))
	while [ $SECONDS -lt $end ]; do
		for _ in $(seq 50); do
			printf 'LPUSH tensor_lifecycle "{\\"op\\":\\"create\\",\\"name\\":\\"y\\",\\"dtype\\":\\"u8\\",\\"shape\\":[4]}"\n'
			printf 'LPUSH tensor_lifecycle "{\\"op\\":\\"delete\\",\\"name\\":\\"y\\"}"\n'
		done | redis-cli -s "$SOCK" >/dev/null
	done
}

# The renamer: rename("y", "y") in a loop; prints how many calls returned.
rename_loop() {
	(cd "$M" && python3 -c '
import os, sys, time
end, n, bad = time.time() + float(sys.argv[1]), 0, 0
while time.time() < end:
    try:
        os.rename("y", "y")
    except FileNotFoundError:
        pass
    except OSError as e:
        bad += 1
        print("unexpected:", e, file=sys.stderr)
    n += 1
print(n, bad)' "$secs")
}

queue_loop & qpid=$!
rename_loop > "$T/renames" 2> "$T/renames.err" & rpid=$!
# The renamer must be done shortly after its time is up; a hung one is stuck in the
# kernel, and only aborting the FUSE connection frees it.
hung=0
for _ in $(seq $(( (secs + 20) * 10 ))); do
	kill -0 $rpid 2>/dev/null || break
	sleep 0.1
done
if kill -0 $rpid 2>/dev/null; then
	hung=1
	dev=$(stat -c %d "$M" 2>/dev/null)
	[ -n "$dev" ] && echo 1 > "/sys/fs/fuse/connections/$dev/abort" 2>/dev/null
fi
wait $rpid
wait $qpid
eq "rename(y, y) against the queue's create/delete of y for ${secs} s: no hang" 0 "$hung"
read -r n bad < "$T/renames"
check "the renamer made progress ($n calls)" test "${n:-0}" -gt 100
eq "no rename failed but with ENOENT" 0 "${bad:-x}"
check "the mount still answers" ls "$M"
finish
