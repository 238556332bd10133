# The library on the cuda backend, where there is a GPU: open by path, direct copies both
# ways, the pooled handle cache, DLPack on kDLCUDA, write marks, the examples.
. "$(dirname "$0")/../lib.sh"
client_tools
if [ -n "$VG" ]; then
	echo "skip - cuda backend checks under valgrind: the valgrind pass checks the host backend"
elif ! nvidia-smi -L >/dev/null 2>&1; then
	echo "skip - cuda backend checks: no GPU here"
else
	start_redis || exit 1
	G=$T/g
	mount_tfs "$G" --node n1 --backend cuda --prefix gpu --queue gpu_q || exit 1
	touch "$G/c"; setfattr -n user.tensor.dtype -v f32 "$G/c"; setfattr -n user.tensor.shape -v '[256,256]' "$G/c"
	eq "cuda: open by path" "f32 [256,256] 262144 cuda ro" "$(out "$TOOL" info "$G/c" | head -1)"
	check "cuda: direct write (cudaMemcpy)" "$TOOL" write "$G/c" 8 0102030405
	eq "cuda: FUSE read sees it" "00000000000000000102030405000000" "$(od -An -v -tx1 -N16 "$G/c" | tr -d ' \n')"
	printf '\xaa\xbb' | dd of="$G/c" bs=1 seek=100 conv=notrunc status=none
	eq "cuda: direct read sees a FUSE write" "aabb00" "$(out "$TOOL" read "$G/c" 100 3 | head -1)"
	printf 'abc' > "$G/p1"; printf 'defg' > "$G/p2"
	eq "cuda: cache opens each handle once, closes all" "0" "$(out "$TOOL" cache "$G/p1" "$G/p1" "$G/p2" | sed -n 2p)"
	eq "cuda: pooled tensors read right" "616263 64656667" "$(out "$TOOL" read "$G/p1" 0 3 | head -1) $(out "$TOOL" read "$G/p2" 0 4 | head -1)"
	eq "cuda: DLPack on kDLCUDA" "device 2 code 2 bits 32 ndim 2" "$(out "$TOOL" dlpack "$G/c" | head -1 | cut -d' ' -f1-8)"
	"$TOOL" mark "$G/c" > "$T/mark.out" 2>&1
	eq "cuda: mark written stores the event handle" 64 "$(getfattr --absolute-names --only-values -n user.tensorfs.event "$G/c" | wc -c)"
	check "cuda: another process waits on it" "$TOOL" wait "$G/c"
	check "cuda: examples/open_by_path" "$EX/open_by_path" "$G/p1"
	eq "cuda: open_by_path added 1" "626364" "$(od -An -tx1 "$G/p1" | tr -d ' ')"
	check "cuda: queue create/get/delete" env TFS_NODE=n1 TFS_QUEUE=gpu_q "$EX/queue_lifecycle" "$URL" gq
	run_py "$G/c"
fi
finish
