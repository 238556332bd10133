# The drain ioctl (lib/fill_ioctl.h): the daemon writes a tensor's bytes into the calling
# process's memory, a shared mapping of a file, as a save through the mount does. Requests
# a saver would never send each get their own error (a mapping past the end of its file is
# EFAULT, not a signal in anyone), the tensor keeps its bytes, and the daemon serves on.
# A save through the files is counted as drains, and with TFS_SAVE_DRAIN=0 as reads.
. "$(dirname "$0")/../lib.sh"
one_mount
FILL="$HELPERS/fill_tool"
stat_of() { jfield "$(getfattr --only-values -n user.tensorfs.stats "$M" 2>/dev/null)" "$1"; }
head -c 65536 /dev/urandom > src.bin
cp src.bin "$M/t"
cp src.bin before.bin
head -c 65536 /dev/zero > out.bin
check "a drain of the whole tensor" "$FILL" drain "$M/t" out.bin
check "its bytes" cmp src.bin out.bin
eq "counted as one drain" 1 "$(stat_of drains)"
head -c 65536 /dev/zero > out.bin
check "a part of the tensor into a part of the file" "$FILL" drain "$M/t" out.bin src_off=100 len=900 at=500
eq "those bytes" "$(tail -c +101 src.bin | head -c 900 | od -An -tx1 | tr -d ' \n')" \
	"$(tail -c +501 out.bin | head -c 900 | od -An -tx1 | tr -d ' \n')"
eq "nothing else" "$(head -c 500 /dev/zero | od -An -tx1 | tr -d ' \n')" "$(head -c 500 out.bin | od -An -tx1 | tr -d ' \n')"
refused() {   # refused DESC ERRNO-NAME fill_tool-drain-ARGS...
	local d=$1 e=$2; shift 2
	eq "$d: $e" "error: $e" "$("$FILL" drain "$@" 2>&1)"
	check "$d: the tensor unchanged" cmp before.bin "$M/t"
}
refused "a tensor opened write-only" EBADF "$M/t" out.bin tensor=wronly
refused "a range past the tensor's end" EINVAL "$M/t" out.bin src_off=1
refused "more than TFS_FILL_MAX" EINVAL "$M/t" out.bin len=$((64 * 1048576 + 1))
refused "an offset that overflows" EINVAL "$M/t" out.bin src_off=0xffffffffffffff00 len=4096
refused "an address that overflows" EINVAL "$M/t" out.bin addr=0xffffffffffffff00 len=4096
refused "flags set" EINVAL "$M/t" out.bin flags=1
refused "pad set" EINVAL "$M/t" out.bin pad=1
refused "a read-only mapping" EFAULT "$M/t" out.bin map=ro
refused "memory unmapped before the call" EFAULT "$M/t" out.bin map=gone
refused "address 0" EFAULT "$M/t" out.bin addr=0 len=4096
refused "a kernel address" EFAULT "$M/t" out.bin addr=0xffffffff81000000 len=4096
refused "a mapping that runs past the end of its file (SIGBUS if touched)" EFAULT "$M/t" out.bin map=long
eq "on a directory: ENOTTY" "error: ENOTTY" "$("$FILL" drain "$M" out.bin 2>&1)"
eq "no more drains counted than the two that were served" 2 "$(stat_of drains)"
check "the daemon serves on" stat "$M/t"
# a save through the files: every byte by drain; with drains off, by read
head -c $((3 * 1048576 + 17)) /dev/urandom > big.bin
cp big.bin "$M/big"
d0=$(stat_of drain_bytes) r0=$(stat_of read_bytes)
check "save through the files" env TENSORCTL_COPY=fuse "$CTL" save -q "$M/big" big.out
check "its bytes" cmp big.bin big.out
eq "every byte by drain" $((d0 + 3 * 1048576 + 17)) "$(stat_of drain_bytes)"
eq "none by read" "$r0" "$(stat_of read_bytes)"
check "the same with drains off (TFS_SAVE_DRAIN=0)" env TENSORCTL_COPY=fuse TFS_SAVE_DRAIN=0 "$CTL" save -q "$M/big" big2.out
check "its bytes" cmp big.bin big2.out
eq "no drain" $((d0 + 3 * 1048576 + 17)) "$(stat_of drain_bytes)"
eq "every byte by read" $((r0 + 3 * 1048576 + 17)) "$(stat_of read_bytes)"
finish
