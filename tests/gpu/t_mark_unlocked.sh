# A read waiting for a producer's written mark holds no lock of the tensor (issue 15,
# review): a new mark (setfattr user.tensorfs.event, which takes the tensor's io lock for
# writing under the namespace lock) goes through at once, and so every other metadata
# operation, while the producer's 3-second kernel still runs.
. "$(dirname "$0")/gpulib.sh"
gpu_tests "producer marked without waiting" \
	"a new mark while a read waits: done before the kernel ends" \
	"a create meanwhile: done before the kernel ends" \
	"the read still waited for the kernel: cmp sees its bytes"
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 || exit 1
cd "$T"
touch "$M/e"; setfattr -n user.tensor.shape -v '[16777216]' "$M/e"
n=$(size_of "$M/e")
"$CONSUMER" gen - 0 "$n" 13 > "$T/pat13"
coproc P { "$CONSUMER" kmark "$(cons_handle "$M/e")" "$(xget "$M/e" ipc_offset)" "$n" 13 "$M/e" 3000; }
ppid=$P_PID
read -r line <&"${P[0]}"
eq "producer marked without waiting" marked "$line"
t0=$(date +%s%N)
cmp "$M/e" "$T/pat13" > "$T/cmp.out" 2>&1 & cpid=$!
sleep 0.3
setfattr -x user.tensorfs.event "$M/e"; t1=$(date +%s%N)
touch "$M/new"; t2=$(date +%s%N)
check "a new mark while a read waits: done before the kernel ends" test $(( (t1 - t0) / 1000000 )) -lt 2000
check "a create meanwhile: done before the kernel ends" test $(( (t2 - t0) / 1000000 )) -lt 2000
wait $cpid; rc=$?
eq "the read still waited for the kernel: cmp sees its bytes" 0 "$rc"
wait "$ppid"
rm -f "$M"/*
cd /
finish
