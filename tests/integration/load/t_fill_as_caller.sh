# The daemon (root here) reads a fill's file as the caller: its user, group and groups.
# An fd opened O_PATH, or write-only, gives no read access the caller lacks; a file the
# caller may read through a supplementary group fills, and not once that group is dropped.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --allow-other || exit 1
cd "$T" || exit 1
chmod 0755 "$T"; chmod 0777 "$M"   # mktemp made $T 0700
FILL="$HELPERS/fill_tool"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
head -c 4096 /dev/zero > "$M/t"; chmod 0666 "$M/t"
cp "$M/t" before.bin
head -c 4096 /dev/urandom > secret.bin; chmod 0600 secret.bin
head -c 4096 /dev/urandom > wo.bin; chown 65534:65534 wo.bin; chmod 0200 wo.bin
head -c 4096 /dev/urandom > grp.bin; chgrp 100 grp.bin; chmod 0640 grp.bin
head -c 4096 /dev/urandom > pub.bin; chmod 0644 pub.bin
eq "root's file through an O_PATH fd: EACCES" "error: EACCES" \
	"$(as_nobody "$FILL" "$M/t" secret.bin open=path 2>&1)"
check "the tensor unchanged" cmp before.bin "$M/t"
eq "its own write-only file: EACCES" "error: EACCES" \
	"$(as_nobody "$FILL" "$M/t" wo.bin open=wronly 2>&1)"
check "the tensor unchanged" cmp before.bin "$M/t"
eq "a group's file, without the group: EACCES" "error: EACCES" \
	"$(as_nobody "$FILL" "$M/t" grp.bin open=path 2>&1)"
check "the tensor unchanged" cmp before.bin "$M/t"
eq "a group's file, in the group" ok \
	"$(setpriv --reuid=65534 --regid=65534 --groups=100 "$FILL" "$M/t" grp.bin 2>&1)"
check "its bytes" cmp grp.bin "$M/t"
eq "a file anyone reads" ok "$(as_nobody "$FILL" "$M/t" pub.bin 2>&1)"
check "its bytes" cmp pub.bin "$M/t"
check "the daemon's own identity back: root's file still fills for root" "$FILL" "$M/t" secret.bin
check "its bytes" cmp secret.bin "$M/t"
finish
