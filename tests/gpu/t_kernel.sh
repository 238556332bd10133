# A CUDA kernel in another process writes a pattern through the handle; read() and cmp on
# the file see it at once (no stale cache), for a large and a pooled small tensor.
. "$(dirname "$0")/gpulib.sh"
gpu_tests "kernel in another process writes, cmp on the file sees it" \
	"kernel write into a pooled small tensor"
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 || exit 1
cd "$T"

touch "$M/k"; setfattr -n user.tensor.dtype -v f32 "$M/k"; setfattr -n user.tensor.shape -v '[4096,1024]' "$M/k"
n=$(size_of "$M/k")
cat "$M/k" > /dev/null   # read once before: a cache would now hold zeros
"$CONSUMER" gen - 0 "$n" 7 > "$T/pat7"
check "kernel fill through the handle" "$CONSUMER" kwrite "$(cons_handle "$M/k")" "$(xget "$M/k" ipc_offset)" "$n" 7
check "kernel in another process writes, cmp on the file sees it" cmp "$M/k" "$T/pat7"
"$CONSUMER" gen - 0 "$n" 8 > "$T/pat8"
"$CONSUMER" kwrite "$(cons_handle "$M/k")" "$(xget "$M/k" ipc_offset)" "$n" 8
check "a second kernel write is seen too" cmp "$M/k" "$T/pat8"
check "a partial read at an offset sees it" bash -c "cmp <(dd if='$M/k' bs=4096 skip=333 count=7 status=none) <(dd if='$T/pat8' bs=4096 skip=333 count=7 status=none)"

for i in 1 2 3; do head -c 3000 /dev/urandom > "$M/s$i"; done
off=$(xget "$M/s2" ipc_offset)
"$CONSUMER" gen - 0 3000 9 > "$T/pat9"
"$CONSUMER" kwrite "$(cons_handle "$M/s2")" "$off" 3000 9
check "kernel write into a pooled small tensor" cmp "$M/s2" "$T/pat9"
check "its neighbours are untouched" bash -c "[ \$(cat '$M/s1' | wc -c) = 3000 ] && ! cmp -s '$M/s1' '$T/pat9' && ! cmp -s '$M/s3' '$T/pat9'"
rm -f "$M"/*
cd /
finish
