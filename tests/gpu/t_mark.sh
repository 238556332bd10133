# The written mark (SPEC §10, issue 4): a producer queues a slow kernel on its stream,
# marks the tensor written with an interprocess event (user.tensorfs.event, as
# tfs_mark_written does) and returns without waiting; cmp on the file must see the
# kernel's bytes, not the zeros before it: the daemon's read() waits for the mark.
. "$(dirname "$0")/gpulib.sh"
gpu_tests "producer marked without waiting" \
	"read waits for the written mark: cmp sees the kernel's bytes" \
	"that read took as long as the kernel (>= 0.5 s)" \
	"a mark whose process has exited does not block reads" \
	"after the mark is removed, reads go on"
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 || exit 1
cd "$T"

touch "$M/e"; setfattr -n user.tensor.shape -v '[16777216]' "$M/e"
n=$(size_of "$M/e")
"$CONSUMER" gen - 0 "$n" 11 > "$T/pat11"
coproc P { "$CONSUMER" kmark "$(cons_handle "$M/e")" "$(xget "$M/e" ipc_offset)" "$n" 11 "$M/e" 1500; }
ppid=$P_PID
read -r line <&"${P[0]}"
eq "producer marked without waiting" marked "$line"
t0=$(date +%s%N)
check "read waits for the written mark: cmp sees the kernel's bytes" cmp "$M/e" "$T/pat11"
t1=$(date +%s%N)
check "that read took as long as the kernel (>= 0.5 s)" test $(( (t1 - t0) / 1000000 )) -ge 500
wait "$ppid"
check "a mark whose process has exited does not block reads" cmp "$M/e" "$T/pat11"
setfattr -x user.tensorfs.event "$M/e"
check "after the mark is removed, reads go on" cmp "$M/e" "$T/pat11"
rm -f "$M"/*
cd /
finish
