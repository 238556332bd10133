# Ctrl-C in the middle of a load: tensorctl says so and the half-made tensor goes.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
# One copy thread, 1 MiB pieces and 1 GiB (a sparse file: nothing to write first), and
# the signal as soon as the tensor is there: the copy threads see it at their next piece,
# so the load is caught even on the H200, where 8 threads load 2 GiB in 70 ms.
truncate -s 1G z.bin
TENSORCTL_COPY=fuse TFS_LOAD_CHUNK_MB=1 "$CTL" load -j 1 z.bin "$M/intr" 2>intr.err &
lpid=$!
for _ in $(seq 500); do [ -e "$M/intr" ] && break; sleep 0.002; done
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
