# The daemon's side of the fill ioctl (core/fill_ioctl.h) under requests a loader would never
# send: each gets its own error, the tensor keeps its bytes, and the daemon serves on.
. "$(dirname "$0")/../lib.sh"
one_mount
FILL="$HELPERS/fill_tool"
head -c 65536 /dev/urandom > src.bin
head -c 65536 /dev/zero > "$M/t"
cp "$M/t" before.bin
mkfifo fifo
refused() {   # refused DESC ERRNO-NAME fill_tool-ARGS...
	local d=$1 e=$2; shift 2
	eq "$d: $e" "error: $e" "$("$FILL" "$@" 2>&1)"
	check "$d: the tensor unchanged" cmp before.bin "$M/t"
}
refused "not the file the caller opened" ESTALE "$M/t" src.bin ino_delta=1
refused "a tensor opened read-only" EBADF "$M/t" src.bin tensor=rdonly
refused "a range past the tensor's end" EINVAL "$M/t" src.bin dst_off=1
refused "more than TFS_FILL_MAX" EINVAL "$M/t" src.bin len=$((64 * 1048576 + 1))
refused "an offset that overflows" EINVAL "$M/t" src.bin src_off=0xffffffffffffff00
refused "flags set" EINVAL "$M/t" src.bin flags=1
refused "a negative fd" EBADF "$M/t" src.bin fd=-5
refused "an fd the caller does not have" EBADF "$M/t" src.bin fd=999
refused "a FIFO, not a regular file" EINVAL "$M/t" fifo len=4096
head -c 65536 /dev/urandom > "$M/other"
refused "a file on a FUSE file system (this one)" EXDEV "$M/t" "$M/other"
head -c 1000 /dev/urandom > short.bin
refused "a file shorter than the range" ENODATA "$M/t" short.bin len=4096
refused "another ioctl number" ENOTTY "$M/t" src.bin cmd=0x5401
eq "on a directory: ENOTTY" "error: ENOTTY" "$("$FILL" "$M" src.bin tensor=rdonly 2>&1)"
check "a good fill after all of them" "$FILL" "$M/t" src.bin
check "its bytes" cmp src.bin "$M/t"
check "a part of the file into a part of the tensor" "$FILL" "$M/t" short.bin src_off=100 dst_off=500 len=900
eq "those bytes" "$(tail -c +101 short.bin | od -An -tx1 | tr -d ' \n')" \
	"$(tail -c +501 "$M/t" | head -c 900 | od -An -tx1 | tr -d ' \n')"
check "the daemon serves on" stat "$M/t"
finish
