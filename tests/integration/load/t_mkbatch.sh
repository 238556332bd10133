# The batch create ioctl (core/mkbatch.h) on the daemon's side: issued on the file whose
# open created a tensor, it makes every tensor of the request in that tensor's directory,
# typed and sized (and, asked, types that tensor too); every request a loader would never
# send is refused with nothing made, and so is one on any other descriptor; a name taken
# stops the batch there; the directory's times show at once; and the daemon serves on.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
MK="$HELPERS/mkbatch_tool"
k=0
mk() {   # mk DIR ARGS...: the request on a tensor this call makes in DIR, a new _<n>
	local d=$1; shift
	"$MK" "$d/_$(date +%s%N)" "$@"
}
names() { LC_ALL=C ls "$1" | grep -v '^_' | tr '\n' ' ' | sed 's/ $//'; }
mkdir "$M/d" "$M/e"
sleep 1.1
m0=$(stat -c %y "$M/d")        # now in the kernel's cache of the directory's attributes
eq "three tensors in one request" "made 3 err 0" "$(mk "$M/d" a:f32:4,8 b:bf16:16 c:u8:)"
check "the directory's mtime moved, seen at once" test "$(stat -c %y "$M/d")" != "$m0"
eq "a: f32" "f32" "$(getfattr --only-values -n user.tensor.dtype "$M/d/a")"
eq "a: [4,8], 128 bytes" "[4,8] 128" "$(getfattr --only-values -n user.tensor.shape "$M/d/a") $(stat -c %s "$M/d/a")"
eq "b: bf16 [16], 32 bytes" "bf16 [16] 32" "$(getfattr --only-values -n user.tensor.dtype "$M/d/b") $(getfattr --only-values -n user.tensor.shape "$M/d/b") $(stat -c %s "$M/d/b")"
eq "c: a scalar, 1 byte" "[] 1" "$(getfattr --only-values -n user.tensor.shape "$M/d/c") $(stat -c %s "$M/d/c")"
eq "zeros" "$(head -c 128 /dev/zero | od -An -tx1)" "$(od -An -tx1 "$M/d/a")"
eq "mode 0644, the caller's" "644 $(id -u)" "$(stat -c '%a %u' "$M/d/a")"
eq "mode from the request" "made 1 err 0" "$(mk "$M/d" mode=0600 m:u8:1)"
eq "its mode" "600" "$(stat -c %a "$M/d/m")"
eq "special bits dropped" "made 1 err 0" "$(mk "$M/d" mode=06777 sp:u8:1)"
eq "its mode" "777" "$(stat -c %a "$M/d/sp")"
eq "self=1: the tensor it goes on typed too" "made 2 err 0" "$("$MK" "$M/d/s0" self=1 s0:f32:2,2 s1:u8:3)"
eq "its dtype, shape and size" "f32 [2,2] 16" "$(getfattr --only-values -n user.tensor.dtype "$M/d/s0") $(getfattr --only-values -n user.tensor.shape "$M/d/s0") $(stat -c %s "$M/d/s0")"
eq "and the one after it" "3" "$(stat -c %s "$M/d/s1")"
rm -f "$M/d/s0" "$M/d/s1"
m0=$(stat -c %y "$M/d")
eq "self=1 alone, in another directory" "made 1 err 0" "$("$MK" "$M/e/s2" self=1 s2:u8:5)"
eq "its size" "5" "$(stat -c %s "$M/e/s2")"
eq "no other directory's times moved" "$m0" "$(stat -c %y "$M/d")"
check "written and read through the mount" sh -c "head -c 128 /dev/urandom > x.bin && cp x.bin '$M/d/a' && cmp x.bin '$M/d/a'"
eq "a record behind each: listed" "a b c m sp" "$(names "$M/d")"
mount_tfs "$T/m2" --node n2 || exit 1
eq "seen from a second mount of the same Redis" "a b c m sp" "$(names "$T/m2/d")"

# listing: d's entries with their sizes, modes and times, less the _ tensors each request
# goes on; not d's own line, whose mtime those creates move (ls -la showed it to the
# minute: a refused request past a minute's turn failed "nothing made")
listing() { ls -l --time-style=full-iso "$M/d" | grep -v -e ' _' -e '^total'; }
listing > before.txt
refused() {   # refused DESC ERRNO-NAME mkbatch_tool-ARGS...
	local d=$1 e=$2; shift 2
	eq "$d: $e" "error: $e" "$("$MK" "$@" 2>&1)"
	eq "$d: nothing made" "$(cat before.txt)" "$(listing)"
}
r() { k=$((k + 1)); refused "$1" "$2" "$M/d/_$k" "${@:3}"; }
r "count 0" EINVAL count=0
r "count past the entries" EINVAL count=3 e1:f32:4 e2:f32:4
r "count short of the entries" EINVAL count=1 e1:f32:4 e2:f32:4
r "count past the bound (256)" EINVAL count=300 e1:f32:4
r "bytes past the entries" EINVAL junk=0 e1:f32:4
r "a byte far past the entries" EINVAL junk=9000 e1:f32:4
r "unknown flags" EINVAL flags=4 e1:f32:4
r "a dtype out of range" EINVAL 'e1:#200:4'
r "17 dims" EINVAL e1:u8:1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1
r "a name with a slash" EINVAL e1/x:f32:4
r "a name '..'" EINVAL ..:f32:4
r "a name '.'" EINVAL .:f32:4
r "a name of length 0" EINVAL nlen=0 e1:f32:4
r "a name longer than its bytes" EINVAL nlen=60000 e1:f32:4
r "a later entry bad, the first good" EINVAL e1:f32:4 'e2:#99:4'
r "a device the mount does not serve" EINVAL device=7 e1:f32:4
r "self=1 with another name first" EINVAL self=1 e1:f32:4 e2:f32:4
r "a smaller request size" ENOTTY cmd=$(( (3 << 30) | (100 << 16) | (0xF7 << 8) | 3 )) e1:f32:4
r "on a tensor made read-only" EBADF open=rdonly e1:f32:4
touch "$M/d/_old"
refused "on a tensor this open did not make" EPERM "$M/d/_old" open=existing e1:f32:4
refused "on a directory" ENOTTY "$M/d" open=dir e1:f32:4
# on a tensor renamed after its create: its file still open, the name moved
python3 - "$MK" "$M/d" <<'PY' > ren.txt
import fcntl, os, subprocess, sys
mk, d = sys.argv[1], sys.argv[2]
fd = os.open(d + "/_ren", os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644)
os.rename(d + "/_ren", d + "/_ren2")        # the file's create still open
def batch(*args):
    r = subprocess.run([mk, "-", "fd=%d" % fd] + list(args), pass_fds=[fd],
                       capture_output=True, text=True)
    return r.stdout.strip()
print(batch("e1:f32:4"))
os.rename(d + "/_ren2", d + "/_ren")      # back under the name it was made with
print(batch("e2:f32:4"))
PY
eq "on the created file, its tensor renamed since: EPERM" "error: EPERM" "$(sed -n 1p ren.txt)"
check "nothing made" test ! -e "$M/d/e1"
eq "the same file, the tensor back under the name it was made with" "made 1 err 0" "$(sed -n 2p ren.txt)"
rm -f "$M/d/e2"

eq "a name taken: the batch stops there" "made 1 err EEXIST" "$(mk "$M/d" n1:f32:4 b:f32:4 n2:f32:4)"
check "what came before it is made" test -f "$M/d/n1"
check "what came after it is not" test ! -e "$M/d/n2"
eq "b kept as it was" "bf16 [16]" "$(getfattr --only-values -n user.tensor.dtype "$M/d/b") $(getfattr --only-values -n user.tensor.shape "$M/d/b")"
eq "a name twice in one batch" "made 1 err EEXIST" "$(mk "$M/d" dup:f32:4 dup:f32:4)"
eq "a size no memory holds: ENOSPC" "made 1 err ENOSPC" "$(mk "$M/d" ok1:f32:4 big:u8:1099511627776000 after:u8:4)"
check "nothing of the refused one" test ! -e "$M/d/big"
check "nor after it" test ! -e "$M/d/after"
eq "a shape whose bytes overflow: EINVAL" "made 0 err EINVAL" "$(mk "$M/d" ovf:f64:4294967296,4294967296)"
check "not made" test ! -e "$M/d/ovf"
eq "in the root" "made 1 err 0" "$("$MK" "$M/_top" top:f32:2)"
eq "its size" "8" "$(stat -c %s "$M/top")"
check "the daemon serves on" stat "$M/d/a"
check "and makes tensors one by one as before" sh -c "echo hi > '$M/d/plain'"
finish
