# Ctrl-C in the middle of a load: tensorctl says so and the half-made tensor goes.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
# One copy thread and 1 GiB (a sparse file: nothing to write first): long enough to be
# caught on the H200, where 8 threads load 512 MiB in 40 ms.
truncate -s 1G z.bin
TENSORCTL_COPY=fuse "$CTL" load -j 1 z.bin "$M/intr" 2>intr.err &
lpid=$!
for _ in $(seq 200); do [ -e "$M/intr" ] && break; sleep 0.01; done
sleep 0.1
kill -INT $lpid 2>/dev/null
wait $lpid; lrc=$?
if [ $lrc -eq 0 ]; then
	echo "skip - interrupted load: it finished before the signal"
else
	check "interrupted load says so" grep -q "tensorctl: load: .*nterrupted" intr.err
	gone "$M/intr" "interrupted load"
fi
rm -f z.bin
finish
