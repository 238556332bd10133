# Filling the GPU: shaping one more tensor fails with ENOSPC and changes nothing; the mount
# stays healthy; freeing memory makes room again.
. "$(dirname "$0")/gpulib.sh"
gpu_tests "filling the GPU gives ENOSPC" "the mount stays healthy after ENOSPC"
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 || exit 1
cd "$T"
head -c 1000000 /dev/urandom > "$T/rand"
cp "$T/rand" "$M/keep"
mkdir "$M/on0" && setfattr -n user.tensor.device -v 0 "$M/on0"
# f32 tensors of 4 GiB, then 256 MiB, then 4 MiB, until the device is full
i=0 err=
for shape in '[1073741824]' '[67108864]' '[1048576]'; do
	while [ $i -lt 400 ]; do
		i=$((i + 1))
		touch "$M/fill$i"; setfattr -n user.tensor.dtype -v f32 "$M/fill$i"
		if ! setfattr -n user.tensor.shape -v "$shape" "$M/fill$i" 2>"$T/err"; then
			err=$(cat "$T/err"); break
		fi
	done
done
echo "# filled with $i tensors; statfs: $(df -h "$M" | tail -1)"
nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/# nvidia-smi: /'
case "$err" in *"No space left"*) ok "filling the GPU gives ENOSPC" ;; *) nok "filling the GPU gives ENOSPC (got '$err')" ;; esac
eq "the failed tensor is unchanged" "[0] 0" "$(xget "$M/fill$i" shape) $(size_of "$M/fill$i")"
check_err "cp of a large file: ENOSPC" "No space left" cp /dev/zero "$M/cpbig"
# (no new CUDA process here: with the device full it cannot even create its context)
check "the mount stays healthy after ENOSPC" bash -c "mountpoint -q '$M' && cmp '$M/keep' '$T/rand' && ls '$M' > /dev/null && echo hi > '$M/keep2' && [ \"\$(cat '$M/keep2')\" = hi ]"
# statfs of a directory placed on device 0 reports that device (the root sums every GPU)
check "statfs shows the device nearly full" bash -c "[ \$(stat -f -c %f '$M/on0') -lt \$(( \$(stat -f -c %b '$M/on0') / 10 )) ]"
rm -f "$M/cpbig" "$M/fill1" "$M/fill2"
check "after freeing 8 GiB a 4 GiB tensor fits" bash -c "touch '$M/again' && setfattr -n user.tensor.dtype -v f32 '$M/again' && setfattr -n user.tensor.shape -v '[1073741824]' '$M/again'"
check "an older tensor still reads right through its handle" bash -c "dump '$M/keep' | cmp - '$T/rand'"
check "and reads as zeros through the handle" "$CONSUMER" zero "$(cons_handle "$M/again")" "$(xget "$M/again" ipc_offset)" 4294967296 0
check "rm everything" bash -c "rm -rf '$M'/*"
sleep 0.3
eq "statfs used back to 0" 0 "$(used_bytes "$M")"
check "the daemon logged no CUDA error" bash -c "! grep -E 'err|ERR' '$T/m.log' | grep -v 'No space' | grep -q cuda"
cd /
finish
