# The first write to an empty tensor makes its memory before it takes the namespace lock,
# with the owner and mode the file had when it was opened (fs/tensors/tensor.h,
# tfs_tensor_grow_prepare). A chmod or chown between that open and the write must not
# leave the tensor in memory made for the old ones: its memory is made again, for the
# new. On the host backend that memory is a shared-memory object (or a block of small
# tensors) with the owner and mode of its tensors, which another uid maps through the
# handle only when the mode lets it.
. "$(dirname "$0")/../lib.sh"
other_uid_mount --backend host
mkdir -m 755 "$M/d"
head -c 4096 /dev/urandom > "$T/src"
# open_change_write FILE MODE CHANGE...: opens FILE new with MODE, runs CHANGE on it while
# open, then writes $T/src through the open descriptor.
open_change_write() {
	python3 - "$@" <<'PY'
import os, subprocess, sys
path, mode, change = sys.argv[1], int(sys.argv[2], 8), sys.argv[3:]
fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, mode)
subprocess.run(change + [path], check=True)
os.write(fd, open(os.environ["T"] + "/src", "rb").read())
os.close(fd)
PY
}
export T
check "open 600, chmod 644, then the first write" open_change_write "$M/d/a" 600 chmod 644
eq "the tensor's memory has the mode it has now" 644 "$(stat -c %a "$(shm_of "$M/d/a")")"
maps() { $NOBODY bash -c 'map_dump "$1"' _ "$1" | cmp -s - "$T/src"; }
export -f map_dump; export SHM_MAP_BIN BACKEND
check "another uid maps its handle and reads the bytes written" maps "$M/d/a"
head -c 4096 /dev/urandom > "$T/src2"
cp "$T/src2" "$M/d/b"
chmod 644 "$M/d/b"
eq "and shares the block of the directory's tensors of that owner and mode" \
	"$(shm_of "$M/d/b")" "$(shm_of "$M/d/a")"

check "open 644, chown 4242, then the first write" open_change_write "$M/d/c" 644 chown 4242
eq "the tensor's memory has the owner it has now" "4242 644" \
	"$(stat -c '%u %a' "$(shm_of "$M/d/c")")"
check "and gives the bytes written" cmp -s "$T/src" "$M/d/c"
check "open 644, chmod 600, then the first write" open_change_write "$M/d/e" 644 chmod 600
eq "the tensor's memory is 600 as the tensor" 600 "$(stat -c %a "$(shm_of "$M/d/e")")"
check_err "another uid cannot map it" "Permission denied" $NOBODY bash -c 'exec 3<"$1"' _ "$(shm_of "$M/d/e")"
finish
