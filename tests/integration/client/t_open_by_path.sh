# tfs_open by path maps the tensor: direct writes and FUSE reads see each other both ways,
# ranges and read-only opens are checked, and on the host backend marks are fences.
. "$(dirname "$0")/../lib.sh"
client_mount
f32_23 "$M/a"
eq "open by path: dtype, shape, bytes, backend" "f32 [2,3] 24 host ro" "$(out "$TOOL" info "$M/a" | head -1)"
check "write through the mapping" "$TOOL" write "$M/a" 4 0102030405
eq "FUSE read sees the direct write" "00000000 01020304 05000000" \
	"$(od -An -v -tx4 --endian=big -N12 "$M/a" | xargs)"
printf '\xaa\xbb' | dd of="$M/a" bs=1 seek=20 conv=notrunc status=none
eq "direct read sees a FUSE write" "aabb0000" "$(out "$TOOL" read "$M/a" 20 4 | head -1)"
check "fill through the pointer" "$TOOL" fill "$M/a" 0x7f
eq "FUSE read sees the pointer writes" "7f7f7f7f" "$(od -An -v -tx1 -N4 "$M/a" | tr -d ' ')"
check_err "range past the end: EINVAL" "error: EINVAL" "$TOOL" read "$M/a" 20 8
check_err "write to a read-only open: EBADF" "error: EBADF" "$TOOL" write-ro "$M/a"
check "host: mark written is a fence" "$TOOL" mark "$M/a"
check "host: wait written is a fence" "$TOOL" wait "$M/a"
finish
