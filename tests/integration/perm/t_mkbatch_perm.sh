# The batch create ioctl (core/mkbatch.h) checks what a create through the mount checks:
# the kernel checks the tensor it goes on (open for writing: a read-only mount refuses it,
# as it refuses a create), the daemon, as the caller, write and search on the directory,
# the owner's tensor quota; a tensor it makes belongs to the caller. A load as a user whose
# directory the daemon's rule refuses (it cannot see how the caller reached it) still
# loads, by creates the kernel checks.
. "$(dirname "$0")/../lib.sh"
other_uid_mount --node n1 -o max_user_tensors=5
MK="$HELPERS/mkbatch_tool"
mkdir -m 755 "$M/ro" "$M/open" "$M/closed"
chmod 777 "$M/open"
mkdir -m 777 "$M/closed/in"
chmod 700 "$M/closed"
touch "$M/ro/roots"
chmod 666 "$M/ro/roots"
eq "nobody, on a tensor it may write in a directory it may not: EACCES, nothing made" \
	"made 0 err EACCES" "$($NOBODY "$MK" "$M/ro/roots" a:f32:4 b:f32:4)"
eq "nothing there" "roots" "$(ls "$M/ro")"
eq "nobody, a directory it may write" "made 2 err 0" "$($NOBODY "$MK" "$M/open/n0" a:f32:4 b:f32:4)"
eq "owned by nobody" "65534 65534" "$(stat -c '%u %g' "$M/open/a")"
eq "nobody's quota (5, three used): 2 more, then EDQUOT" "made 2 err EDQUOT" "$($NOBODY "$MK" "$M/open/n0" c:f32:4 d:f32:4 e:f32:4)"
check "the one past the quota not made" test ! -e "$M/open/e"
eq "root is not bound" "made 2 err 0" "$("$MK" "$M/open/r0" r1:f32:4 r2:f32:4)"
mkdir -m 2777 "$M/sgid"
chgrp 4242 "$M/sgid"
eq "a set-group-ID directory gives its group" "made 1 err 0" "$("$MK" "$M/sgid/s0" s:f32:4)"
eq "its group" "4242" "$(stat -c %g "$M/sgid/s")"
# A read-only bind mount of the mount: the kernel refuses the open for writing, as it
# refuses a create; the request never reaches the daemon.
mkdir -p "$T/robind"
touch "$M/open/anchor"
out=$(unshare -m sh -c "mount --bind '$M' '$T/robind' && mount -o remount,bind,ro '$T/robind' && '$MK' '$T/robind/open/anchor' viaro:f32:4" 2>&1)
eq "through a read-only bind mount: EROFS" "error: EROFS" "$out"
check "nothing made" test ! -e "$M/open/viaro"
# A load as nobody from inside a directory whose parent nobody may not search: the kernel
# lets it create there (the walk is from its working directory), the daemon's rule is the
# directory's own bits, so the batch goes; and so does the load.
rm -f "$M/open/"*
python3 "$ROOT/tests/integration/load/st_make.py" s.safetensors 3 a:F32:4 b:F32:4 c:F32:4 || exit 1
chmod 644 s.safetensors
(cd "$M/closed/in" && $NOBODY "$CTL" load -q "$T/s.safetensors" out1) 2>&1
check "a load as nobody in a directory below one it may not search" test -f "$M/closed/in/out1/c"
# A load past the quota fails inside a batch: what the batches made goes with it.
specs=(); for i in $(seq 0 11); do specs+=("q$i:F32:4"); done
python3 "$ROOT/tests/integration/load/st_make.py" q.safetensors 4 "${specs[@]}" || exit 1
chmod 644 q.safetensors
rm -rf "$M/closed/in/out1"
out=$($NOBODY "$CTL" load -q "$T/q.safetensors" "$M/open/q" 2>&1)
check "a load of 12 as nobody, quota 5: fails" test $? -ne 0
check "saying why" grep -q "quota" <<<"$out"
check "and leaves nothing" test ! -e "$M/open/q"
eq "nobody makes 5 again" "made 4 err 0" "$($NOBODY "$MK" "$M/open/z0" z1:u8:1 z2:u8:1 z3:u8:1 z4:u8:1)"
finish
