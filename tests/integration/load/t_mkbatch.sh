# The batch create ioctl (core/mkbatch.h) on the daemon's side: issued on a tensor open for
# writing, it makes every tensor of the request in that tensor's directory, typed and
# sized; every request a loader would never send is refused with nothing made; a name
# taken stops the batch there; the directory's times show at once; and the daemon serves on.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
MK="$HELPERS/mkbatch_tool"
mkdir "$M/d"
touch "$M/d/_"
sleep 1.1
m0=$(stat -c %y "$M/d")        # now in the kernel's cache of the directory's attributes
eq "three tensors in one request, on _" "made 3 err 0" "$("$MK" "$M/d/_" a:f32:4,8 b:bf16:16 c:u8:)"
check "the directory's mtime moved, seen at once" test "$(stat -c %y "$M/d")" != "$m0"
eq "a: f32" "f32" "$(getfattr --only-values -n user.tensor.dtype "$M/d/a")"
eq "a: [4,8], 128 bytes" "[4,8] 128" "$(getfattr --only-values -n user.tensor.shape "$M/d/a") $(stat -c %s "$M/d/a")"
eq "b: bf16 [16], 32 bytes" "bf16 [16] 32" "$(getfattr --only-values -n user.tensor.dtype "$M/d/b") $(getfattr --only-values -n user.tensor.shape "$M/d/b") $(stat -c %s "$M/d/b")"
eq "c: a scalar, 1 byte" "[] 1" "$(getfattr --only-values -n user.tensor.shape "$M/d/c") $(stat -c %s "$M/d/c")"
eq "zeros" "$(head -c 128 /dev/zero | od -An -tx1)" "$(od -An -tx1 "$M/d/a")"
eq "mode 0644, the caller's" "644 $(id -u)" "$(stat -c '%a %u' "$M/d/a")"
eq "mode from the request" "made 1 err 0" "$("$MK" "$M/d/_" mode=0600 m:u8:1)"
eq "its mode" "600" "$(stat -c %a "$M/d/m")"
eq "special bits dropped" "made 1 err 0" "$("$MK" "$M/d/_" mode=06777 sp:u8:1)"
eq "its mode" "777" "$(stat -c %a "$M/d/sp")"
eq "self=1: the tensor it goes on typed too" "made 2 err 0" "$("$MK" "$M/d/s0" self=1 s0:f32:2,2 s1:u8:3)"
eq "its dtype, shape and size" "f32 [2,2] 16" "$(getfattr --only-values -n user.tensor.dtype "$M/d/s0") $(getfattr --only-values -n user.tensor.shape "$M/d/s0") $(stat -c %s "$M/d/s0")"
eq "and the one after it" "3" "$(stat -c %s "$M/d/s1")"
rm -f "$M/d/s0" "$M/d/s1"
check "written and read through the mount" sh -c "head -c 128 /dev/urandom > x.bin && cp x.bin '$M/d/a' && cmp x.bin '$M/d/a'"
eq "a record behind each: listed" "_ a b c m sp" "$(LC_ALL=C ls "$M/d" | tr '\n' ' ' | sed 's/ $//')"
mount_tfs "$T/m2" --node n2 || exit 1
eq "seen from a second mount of the same Redis" "a b c m sp" "$(LC_ALL=C ls "$T/m2/d" | grep -v '^_$' | tr '\n' ' ' | sed 's/ $//')"

ls -la "$M/d" > before.txt
refused() {   # refused DESC ERRNO-NAME mkbatch_tool-ARGS...
	local d=$1 e=$2; shift 2
	eq "$d: $e" "error: $e" "$("$MK" "$@" 2>&1)"
	eq "$d: nothing made" "$(cat before.txt)" "$(ls -la "$M/d")"
}
refused "count 0" EINVAL "$M/d/_" count=0
refused "count past the entries" EINVAL "$M/d/_" count=3 e1:f32:4 e2:f32:4
refused "count short of the entries" EINVAL "$M/d/_" count=1 e1:f32:4 e2:f32:4
refused "count past the bound (256)" EINVAL "$M/d/_" count=300 e1:f32:4
refused "bytes past the entries" EINVAL "$M/d/_" junk=0 e1:f32:4
refused "a byte far past the entries" EINVAL "$M/d/_" junk=9000 e1:f32:4
refused "unknown flags" EINVAL "$M/d/_" flags=4 e1:f32:4
refused "a dtype out of range" EINVAL "$M/d/_" 'e1:#200:4'
refused "17 dims" EINVAL "$M/d/_" e1:u8:1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1
refused "a name with a slash" EINVAL "$M/d/_" e1/x:f32:4
refused "a name '..'" EINVAL "$M/d/_" ..:f32:4
refused "a name '.'" EINVAL "$M/d/_" .:f32:4
refused "a name of length 0" EINVAL "$M/d/_" nlen=0 e1:f32:4
refused "a name longer than its bytes" EINVAL "$M/d/_" nlen=60000 e1:f32:4
refused "a later entry bad, the first good" EINVAL "$M/d/_" e1:f32:4 'e2:#99:4'
refused "a device the mount does not serve" EINVAL "$M/d/_" device=7 e1:f32:4
refused "a smaller request size" ENOTTY "$M/d/_" cmd=$(( (3 << 30) | (100 << 16) | (0xF7 << 8) | 3 )) e1:f32:4
refused "self=1 with another name first" EINVAL "$M/d/_" self=1 e1:f32:4 e2:f32:4
refused "on a tensor open read-only" EBADF "$M/d/_" open=rdonly e1:f32:4
refused "on a directory" ENOTTY "$M/d" open=dir e1:f32:4

ls -la "$M/d" > before.txt
eq "a name taken: the batch stops there" "made 1 err EEXIST" "$("$MK" "$M/d/_" n1:f32:4 b:f32:4 n2:f32:4)"
check "what came before it is made" test -f "$M/d/n1"
check "what came after it is not" test ! -e "$M/d/n2"
eq "b kept as it was" "bf16 [16]" "$(getfattr --only-values -n user.tensor.dtype "$M/d/b") $(getfattr --only-values -n user.tensor.shape "$M/d/b")"
eq "a name twice in one batch" "made 1 err EEXIST" "$("$MK" "$M/d/_" dup:f32:4 dup:f32:4)"
eq "a size no memory holds: ENOSPC" "made 1 err ENOSPC" "$("$MK" "$M/d/_" ok1:f32:4 big:u8:1099511627776000 after:u8:4)"
check "nothing of the refused one" test ! -e "$M/d/big"
check "nor after it" test ! -e "$M/d/after"
eq "a shape whose bytes overflow: EINVAL" "made 0 err EINVAL" "$("$MK" "$M/d/_" ovf:f64:4294967296,4294967296)"
check "not made" test ! -e "$M/d/ovf"
rm -f "$M/d/n1" "$M/d/dup" "$M/d/ok1"
eq "in the root, on a tensor there" "made 1 err 0" "$("$MK" "$M/top0" top:f32:2)"
eq "its size" "8" "$(stat -c %s "$M/top")"
mv "$M/d/_" "$M/moved"
eq "on a tensor renamed since it was made: in its directory now" "made 1 err 0" "$("$MK" "$M/moved" inroot:f32:2)"
check "made beside it" test -f "$M/inroot"
check "the daemon serves on" stat "$M/d/a"
check "and makes tensors one by one as before" sh -c "echo hi > '$M/d/plain'"
umount_tfs "$T/m2"
finish
