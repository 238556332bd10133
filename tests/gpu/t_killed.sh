# A consumer killed while it holds a tensor (open file + mapped handle, or a queue `get`)
# gives its reference back; the memory is freed once the name is gone too.
. "$(dirname "$0")/gpulib.sh"
gpu_tests "a killed consumer holding an open tensor returns its reference" \
	"a killed queue holder with a mapped handle is reaped"
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 || exit 1
cd "$T"
u0=$(used_bytes "$M")
head -c 4194304 /dev/urandom > "$M/k"
"$CONSUMER" hold "$(cons_handle "$M/k")" "$(xget "$M/k" ipc_offset)" 4096 0 < "$M/k" > "$T/hold.out" 2>&1 &
c=$!
wait_for grep -q holding "$T/hold.out"
eq "consumer holding: refcount 2" 2 "$(rcli hget tensorfs:tensor:k refcount)"
kill -9 $c; wait $c 2>/dev/null
wait_for test "$(rcli hget tensorfs:tensor:k refcount)" = 1
eq "a killed consumer holding an open tensor returns its reference" 1 "$(rcli hget tensorfs:tensor:k refcount)"

# the queue path: get with the consumer's pid, map, die
"$CONSUMER" hold "$(cons_handle "$M/k")" "$(xget "$M/k" ipc_offset)" 4096 0 > "$T/hold2.out" 2>&1 &
c=$!
wait_for grep -q holding "$T/hold2.out"
rcli lpush tensor_lifecycle "{\"op\":\"get\",\"name\":\"k\",\"pid\":$c,\"node\":\"n1\",\"id\":\"g1\",\"reply\":\"tk:r1\"}" >/dev/null
r=$(rcli brpop tk:r1 3 | tail -n 1)
check "queue get answered" bash -c "echo '$r' | grep -q '\"ok\":true'"
eq "queue holder counted" 2 "$(rcli hget tensorfs:tensor:k refcount)"
rm "$M/k"
kill -9 $c; wait $c 2>/dev/null
reaped() { [ "$(rcli --scan --pattern 'tensorfs:unlinked:*' | wc -l)" = 0 ] && [ "$(rcli exists tensorfs:tensor:k)" = 0 ]; }
wait_for reaped
check "a killed queue holder with a mapped handle is reaped" reaped
sleep 0.2
eq "its memory is freed (statfs used back)" "$u0" "$(used_bytes "$M")"
cd /
finish
