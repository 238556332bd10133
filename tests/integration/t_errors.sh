# Bad input: each gets the errno SPEC names and changes nothing.
. "$(dirname "$0")/lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --max-bytes 64M || exit 1
cd "$T"

touch "$M/t"
setfattr -n user.tensor.dtype -v f32 "$M/t"
setfattr -n user.tensor.shape -v '[2,3]' "$M/t"
before=$(rcli hgetall tensorfs:tensor:t | md5sum)
unchanged() { eq "$1 changes nothing" "$before" "$(rcli hgetall tensorfs:tensor:t | md5sum)"; }

check_err "unknown dtype: EINVAL" "Invalid argument" setfattr -n user.tensor.dtype -v f33 "$M/t"
unchanged "unknown dtype"
check_err "empty dtype: EINVAL" "Invalid argument" setfattr -n user.tensor.dtype -v '' "$M/t"
for bad in '[-1]' '[1.5]' '[a]' '[1,,2]' '[1' '' '[2]x' '1 2' '[18446744073709551616]'; do
	check_err "shape '$bad': EINVAL" "Invalid argument" setfattr -n user.tensor.shape -v "$bad" "$M/t"
done
unchanged "bad shapes"
check_err "shape overflowing 64 bits: EINVAL" "Invalid argument" setfattr -n user.tensor.shape -v '[4294967296,4294967296,16]' "$M/t"
check_err "17 dims: EINVAL" "Invalid argument" setfattr -n user.tensor.shape -v '[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]' "$M/t"
check "16 dims accepted" setfattr -n user.tensor.shape -v '[1,1,1,1,1,1,1,1,1,1,1,1,1,1,2,3]' "$M/t"
check "back to [2,3]" setfattr -n user.tensor.shape -v '[2,3]' "$M/t"
before=$(rcli hgetall tensorfs:tensor:t | md5sum)
for ro in bytes ipc_handle ipc_offset refcount ctime node meta; do
	check_err "write read-only $ro: EPERM" "Operation not permitted" setfattr -n user.tensor.$ro -v 1 "$M/t"
done
unchanged "read-only writes"
check_err "unknown user.tensor.* name: EINVAL" "Invalid argument" setfattr -n user.tensor.colour -v red "$M/t"
check_err "trusted.* xattr: ENOTSUP" "Operation not supported" setfattr -n trusted.x -v 1 "$M/t"
check_err "device out of range: EINVAL" "Invalid argument" setfattr -n user.tensor.device -v 7 "$M/t"
check "setting the same device on an allocated tensor is fine" setfattr -n user.tensor.device -v 0 "$M/t"
check_err "shape larger than --max-bytes: ENOSPC" "No space left" setfattr -n user.tensor.shape -v '[1024,1024,128]' "$M/t"
unchanged "out of memory"
eq "still readable after ENOSPC" 24 "$(cat "$M/t" | wc -c)"
check_err "write past --max-bytes: ENOSPC" "No space left" dd if=/dev/zero of="$M/big" bs=1M count=100 status=none
check "partial file removable" rm -f "$M/big"

# reshaping while another process holds it open
sleep 30 < "$M/t" &
holder=$!
sleep 0.2
check_err "reshape held by another process: EBUSY" "busy" setfattr -n user.tensor.shape -v '[6,6]' "$M/t"
check "same-byte-count reshape while held is fine" setfattr -n user.tensor.shape -v '[3,2]' "$M/t"
kill $holder; wait $holder 2>/dev/null
sleep 0.1
check "reshape once released" setfattr -n user.tensor.shape -v '[6,6]' "$M/t"

check_err "symlink: EPERM" "Operation not permitted" ln -s t "$M/l"
check_err "hard link: EPERM" "Operation not permitted" ln "$M/t" "$M/l"
check_err "mkfifo: EPERM" "Operation not permitted" mkfifo "$M/fifo"
check_err "mknod char device: EPERM" "Operation not permitted" mknod "$M/dev" c 1 3
check "mknod of a regular file works" bash -c "python3 -c \"import os,stat; os.mknod('$M/reg', 0o644 | stat.S_IFREG)\" 2>/dev/null || touch '$M/reg'"
mkdir "$M/d"; touch "$M/d/x"
check_err "rmdir non-empty: ENOTEMPTY" "not empty" rmdir "$M/d"
check_err "rm of a directory: EISDIR" "Is a directory" rm "$M/d"
check_err "rename dir into itself: EINVAL" "Invalid argument" perl -e 'rename($ARGV[0], $ARGV[1]) or die "$!\n"' "$M/d" "$M/d/sub"
check_err "create in a missing dir: ENOENT" "No such file" touch "$M/nodir/x"
long=$(printf 'x%.0s' $(seq 256))
check_err "name of 256 bytes: ENAMETOOLONG" "too long" touch "$M/$long"
check "name of 255 bytes works" touch "$M/${long:1}"

# a record edited by hand into garbage
touch "$M/g"
rcli hset tensorfs:tensor:g2 dtype nonsense shape '[[' bytes -5 node other >/dev/null
rcli hset tensorfs:dirents: g2 t >/dev/null
check "garbage record: stat shows no permissions" bash -c "[ \"\$(stat -c %a:%s '$M/g2')\" = 0:0 ]"
check_err "garbage record: reading fails with EIO" "Input/output error" cat "$M/g2"
check_err "garbage record: xattrs fail with EIO" "Input/output error" getfattr -n user.tensor.shape "$M/g2"
check "daemon alive after garbage" stat "$M/g"
check "ls still works with garbage present" bash -c "ls '$M' | grep -qx g2"
check "rm removes the garbage record" rm "$M/g2"
eq "garbage record gone" 0 "$(rcli exists tensorfs:tensor:g2)"
check "logged the malformed record" grep -q "malformed" "$T/m.log"
rcli hset tensorfs:tensor:t refcount banana >/dev/null
check "local tensors are served from memory, not the edited record" bash -c "[ \"\$(getfattr --only-values -n user.tensor.refcount '$M/t')\" = 1 ]"
cd /
finish
