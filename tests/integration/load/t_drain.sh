# The drain ioctl (lib/fill_ioctl.h): the daemon writes a tensor's bytes into a file the
# caller has open for reading and writing, as a save through the mount does. Requests a
# saver would never send each get their own error (a file cut short is refused, not a
# signal in the daemon), the tensor and the file keep their bytes, and the daemon serves
# on. A save through the files is counted as drains, and with TFS_SAVE_DRAIN=0 as reads.
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
eq "counted as a drain" 1 "$(stat_of drains)"
head -c 65536 /dev/zero > out.bin
check "a part of the tensor into a part of the file" "$FILL" drain "$M/t" out.bin src_off=100 len=900 dst_off=5000
eq "those bytes" "$(tail -c +101 src.bin | head -c 900 | od -An -tx1 | tr -d ' \n')" \
	"$(tail -c +5001 out.bin | head -c 900 | od -An -tx1 | tr -d ' \n')"
eq "nothing else" "$(head -c 5000 /dev/zero | od -An -tx1 | tr -d ' \n')" "$(head -c 5000 out.bin | od -An -tx1 | tr -d ' \n')"
cp out.bin out.before
mkfifo fifo
refused() {   # refused DESC ERRNO-NAME fill_tool-drain-ARGS...
	local d=$1 e=$2; shift 2
	eq "$d: $e" "error: $e" "$("$FILL" drain "$@" 2>&1)"
	check "$d: the tensor unchanged" cmp before.bin "$M/t"
	check "$d: the file unchanged" cmp out.before out.bin
}
refused "a tensor opened write-only" EBADF "$M/t" out.bin tensor=wronly
refused "a file opened read-only" EBADF "$M/t" out.bin open=rdonly
refused "a file opened write-only" EBADF "$M/t" out.bin open=wronly
refused "an O_PATH descriptor" EBADF "$M/t" out.bin open=path
refused "not the file the caller opened" ESTALE "$M/t" out.bin ino_delta=1
refused "a range past the tensor's end" EINVAL "$M/t" out.bin src_off=1
refused "more than TFS_FILL_MAX" EINVAL "$M/t" out.bin len=$((64 * 1048576 + 1))
refused "a tensor offset that overflows" EINVAL "$M/t" out.bin src_off=0xffffffffffffff00 len=4096
refused "a file offset that overflows" EINVAL "$M/t" out.bin dst_off=0x7fffffffffffff00 len=4096
refused "flags set" EINVAL "$M/t" out.bin flags=1
refused "a negative fd" EBADF "$M/t" out.bin fd=-5
refused "an fd the caller does not have" EBADF "$M/t" out.bin fd=999
refused "a file shorter than the range (a drain never grows it)" ENODATA "$M/t" out.bin dst_off=1
refused "a FIFO, not a regular file" EINVAL "$M/t" fifo len=4096 open=rdwr
head -c 65536 /dev/zero > "$M/other"
eq "a file on a FUSE file system (this one): EXDEV" "error: EXDEV" "$("$FILL" drain "$M/t" "$M/other" 2>&1)"
eq "on a directory: ENOTTY" "error: ENOTTY" "$("$FILL" drain "$M" out.bin 2>&1)"
eq "no more drains counted than the two served" 2 "$(stat_of drains)"
check "the daemon serves on" stat "$M/t"
# the file cut short and grown again while the daemon writes it: each drain succeeds or
# fails with EFAULT or ENODATA, and the daemon lives (a fault past the end is no SIGBUS)
head -c $((16 * 1048576)) /dev/urandom > "$M/t16"
head -c $((16 * 1048576)) /dev/zero > cut.bin
( for _ in $(seq 400); do truncate -s 0 cut.bin; truncate -s 16M cut.bin; done ) &
cutter=$!
bad=0
for _ in $(seq 40); do
	case $("$FILL" drain "$M/t16" cut.bin 2>&1) in
	ok|"error: EFAULT"|"error: ENODATA") ;;
	*) bad=$((bad + 1)) ;;
	esac
done
wait $cutter
eq "drains into a file cut short meanwhile: ok, EFAULT or ENODATA" 0 "$bad"
check "the daemon lives" kill -0 "${MNT_PID[$M]}"
check "and serves" stat "$M/t16"
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
