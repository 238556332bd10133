# The batch create ioctl (core/mkbatch.h) checks what a create through the mount checks:
# it goes only on the file whose open created a tensor, a create the kernel checked (a
# read-only mount, a sandbox that forbids making files, the directory's bits); the
# daemon checks, as the caller, write and search on the directory and the owner's tensor
# quota; a tensor it makes belongs to the caller. A writable descriptor of someone else's
# tensor gives nothing. A load as a user the daemon's rule refuses (it reads 64 groups)
# or below a directory it may not search still loads, and one past the quota leaves nothing.
. "$(dirname "$0")/../lib.sh"
other_uid_mount --node n1 --debug -o max_user_tensors=5
MK="$HELPERS/mkbatch_tool"
log="$T/m.log"
mkdir -m 755 "$M/ro" "$M/open" "$M/closed"
chmod 777 "$M/open"
mkdir -m 777 "$M/closed/in"
chmod 700 "$M/closed"
touch "$M/ro/roots"
chmod 666 "$M/ro/roots"
eq "nobody, a directory it may not write: the create refused, nothing made" "error: EACCES" \
	"$($NOBODY "$MK" "$M/ro/n0" a:f32:4 b:f32:4)"
eq "nobody, on root's tensor it may write: EPERM" "error: EPERM" \
	"$($NOBODY "$MK" "$M/ro/roots" open=existing a:f32:4 b:f32:4)"
eq "nothing there" "roots" "$(ls "$M/ro")"
eq "nobody, a directory it may write" "made 2 err 0" "$($NOBODY "$MK" "$M/open/n0" a:f32:4 b:f32:4)"
eq "owned by nobody" "65534 65534" "$(stat -c '%u %g' "$M/open/a")"
eq "nobody's quota (5, three used, one more for the file it goes on): then EDQUOT" \
	"made 1 err EDQUOT" "$($NOBODY "$MK" "$M/open/n1" c:f32:4 d:f32:4 e:f32:4)"
check "the one past the quota not made" test ! -e "$M/open/d"
eq "root is not bound" "made 2 err 0" "$("$MK" "$M/open/r0" r1:f32:4 r2:f32:4)"
mkdir -m 2777 "$M/sgid"
chgrp 4242 "$M/sgid"
eq "a set-group-ID directory gives its group" "made 1 err 0" "$("$MK" "$M/sgid/s0" s:f32:4)"
eq "its group" "4242" "$(stat -c %g "$M/sgid/s")"
# A read-only bind mount of the mount: the kernel refuses the create, as any create.
mkdir -p "$T/robind"
out=$(unshare -m sh -c "mount --bind '$M' '$T/robind' && mount -o remount,bind,ro '$T/robind' && '$MK' '$T/robind/open/viaro0' viaro:f32:4" 2>&1)
eq "through a read-only bind mount: EROFS" "error: EROFS" "$out"
check "nothing made" test ! -e "$M/open/viaro"
# A Landlock sandbox that forbids making regular files: no create, so no batch either.
out=$(python3 - "$MK" "$M/open/ll0" <<'PY' 2>&1
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
attr = struct.pack("Q", 1 << 8)                     # LANDLOCK_ACCESS_FS_MAKE_REG
buf = ctypes.create_string_buffer(attr, len(attr))
fd = libc.syscall(444, buf, len(attr), 0)           # landlock_create_ruleset
if fd < 0:
    print("no landlock: " + os.strerror(ctypes.get_errno())); sys.exit(0)
assert libc.prctl(38, 1, 0, 0, 0) == 0              # PR_SET_NO_NEW_PRIVS
assert libc.syscall(446, fd, 0) == 0                # landlock_restrict_self
os.execv(sys.argv[1], [sys.argv[1], sys.argv[2], "ll:f32:4"])
PY
)
case $out in
"no landlock: "*) echo "skip - under a sandbox that forbids making files: $out" ;;
*)	eq "under a sandbox that forbids making files: the create refused" "error: EACCES" "$out"
	check "nothing made" test ! -e "$M/open/ll" ;;
esac
rm -f "$M/open/"*
python3 "$ROOT/tests/integration/load/st_make.py" s.safetensors 3 a:F32:4 b:F32:4 c:F32:4 || exit 1
chmod 644 s.safetensors
# Below a directory nobody may not search: the kernel lets it create there (the walk is
# from its working directory), the daemon checks the directory's own bits.
start=$(wc -l < "$log")
(cd "$M/closed/in" && $NOBODY "$CTL" load -q "$T/s.safetensors" out1) 2>&1
check "a load as nobody in a directory below one it may not search" test -f "$M/closed/in/out1/c"
eq "made by a batch" 1 "$(tail -n +"$((start + 1))" "$log" | grep -c 'MKBATCH /closed/in/out1: 3 of 3 made')"
rm -rf "$M/closed/in/out1"
# Write on the directory through the 70th group, which the daemon does not read: the batch
# is refused past its first tensor, and the load goes on with a create each.
mkdir -m 770 "$M/g"
chgrp 2070 "$M/g"
groups=$(seq -s, 2001 2070)
start=$(wc -l < "$log")
(cd "$T" && setpriv --reuid=65534 --regid=65534 --groups "$groups" "$CTL" load -q --merge s.safetensors "$M/g") 2>&1
check "a load by a user with 70 groups, writing through the 70th" test -f "$M/g/c"
eq "all three made" "a b c" "$(ls "$M/g" | tr '\n' ' ' | sed 's/ $//')"
eq "the batch refused past its first" 1 "$(tail -n +"$((start + 1))" "$log" | grep -c 'MKBATCH /g: 1 of 3 made: Permission denied')"
rm -rf "$M/g"
# A load past the quota fails inside a batch: what the batches made goes with it.
specs=(); for i in $(seq 0 11); do specs+=("q$i:F32:4"); done
python3 "$ROOT/tests/integration/load/st_make.py" q.safetensors 4 "${specs[@]}" || exit 1
chmod 644 q.safetensors
out=$($NOBODY "$CTL" load -q "$T/q.safetensors" "$M/open/q" 2>&1)
check "a load of 12 as nobody, quota 5: fails" test $? -ne 0
check "saying why" grep -q "quota" <<<"$out"
check "and leaves nothing" test ! -e "$M/open/q"
eq "nobody makes 5 again" "made 4 err 0" "$($NOBODY "$MK" "$M/open/z0" z1:u8:1 z2:u8:1 z3:u8:1 z4:u8:1)"
finish
