# The batch create ioctl (core/mkbatch.h) checks what a create through the mount checks,
# as the caller: write and search on the directory, search on every one above it, the
# owner's tensor quota; and a tensor it makes belongs to the caller.
. "$(dirname "$0")/../lib.sh"
other_uid_mount --node n1 -o max_user_tensors=5
MK="$HELPERS/mkbatch_tool"
mkdir -m 755 "$M/ro" "$M/open" "$M/closed"
chmod 777 "$M/open"
mkdir -m 777 "$M/closed/in"
chmod 700 "$M/closed"
eq "nobody, a directory it may not write: EACCES, nothing made" "made 0 err EACCES" "$($NOBODY "$MK" "$M/ro" a:f32:4 b:f32:4)"
check "nothing there" test -z "$(ls "$M/ro")"
eq "nobody, a directory it may write" "made 2 err 0" "$($NOBODY "$MK" "$M/open" a:f32:4 b:f32:4)"
eq "owned by nobody" "65534 65534" "$(stat -c '%u %g' "$M/open/a")"
check "root opens a directory above one it may not search" sh -c "exec 3<'$M/closed/in' && cd /"
eq "nobody, a directory under one it may not search (opened by root): EACCES" "made 0 err EACCES" \
	"$(exec 3<"$M/closed/in"; $NOBODY sh -c "'$MK' /proc/self/fd/3 a:f32:4" 2>&1)"
check "nothing there" test -z "$(ls "$M/closed/in")"
eq "nobody's quota: 3 more, then EDQUOT" "made 3 err EDQUOT" "$($NOBODY "$MK" "$M/open" c:f32:4 d:f32:4 e:f32:4 f:f32:4 g:f32:4)"
check "the one past the quota not made" test ! -e "$M/open/f"
eq "root is not bound" "made 2 err 0" "$("$MK" "$M/open" r1:f32:4 r2:f32:4)"
mkdir -m 2777 "$M/sgid"
chgrp 4242 "$M/sgid"
eq "a set-group-ID directory gives its group" "made 1 err 0" "$("$MK" "$M/sgid" s:f32:4)"
eq "its group" "4242" "$(stat -c %g "$M/sgid/s")"
finish
