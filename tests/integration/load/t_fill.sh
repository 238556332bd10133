# A load through the mount has the daemon fill each piece from the file (core/fill_ioctl.h):
# the bytes arrive whole and the daemon counts them as fills, not writes. With
# TFS_LOAD_FILL=0 the same load goes by write(), the same bytes.
. "$(dirname "$0")/../lib.sh"
one_mount
stat_of() { jfield "$(getfattr --only-values -n user.tensorfs.stats "$M" 2>/dev/null)" "$1"; }
head -c 9000001 /dev/urandom > raw.bin
w0=$(stat_of write_bytes)
check "load through the mount" env TENSORCTL_COPY=fuse "$CTL" load raw.bin "$M/raw"
check "its bytes" cmp raw.bin "$M/raw"
eq "every byte came by fill" 9000001 "$(stat_of fill_bytes)"
eq "none by write" "$w0" "$(stat_of write_bytes)"
check "load again with fills off" env TENSORCTL_COPY=fuse TFS_LOAD_FILL=0 "$CTL" load raw.bin "$M/raw2"
check "its bytes" cmp raw.bin "$M/raw2"
eq "no fill" 9000001 "$(stat_of fill_bytes)"
eq "every byte by write" $((w0 + 9000001)) "$(stat_of write_bytes)"
# safetensors: many tensors, each filled at its own offset of the file
check "a safetensors file" /usr/bin/python3 "$ROOT/tests/integration/tensorctl/make_files.py" "$T"
check "load it through the mount" env TENSORCTL_COPY=fuse "$CTL" load m.safetensors "$M/st"
check "save it back" "$CTL" save "$M/st" st.out
check "byte-identical" cmp m.safetensors st.out
finish
