# The daemon (root here, every capability) reads a fill's file through the caller's own
# open file, never opening it again: an fd opened O_PATH, or write-only, gives nothing to
# read (EBADF), for another user as for root without capabilities, and a file the caller
# opened for reading (its own, or through a group) fills.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --allow-other || exit 1
cd "$T" || exit 1
chmod 0755 "$T"; chmod 0777 "$M"   # mktemp made $T 0700
FILL="$HELPERS/fill_tool"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# uid 0, no capabilities: a new program of root gets only what the bounding set allows
no_caps() { setpriv --bounding-set=-all --inh-caps=-all "$@"; }
head -c 4096 /dev/zero > "$M/t"; chmod 0666 "$M/t"
cp "$M/t" before.bin
head -c 4096 /dev/urandom > secret.bin; chmod 0600 secret.bin
head -c 4096 /dev/urandom > sealed.bin; chmod 0000 sealed.bin
head -c 4096 /dev/urandom > wo.bin; chown 65534:65534 wo.bin; chmod 0200 wo.bin
head -c 4096 /dev/urandom > grp.bin; chgrp 100 grp.bin; chmod 0640 grp.bin
head -c 4096 /dev/urandom > pub.bin; chmod 0644 pub.bin
eq "another user: root's 0600 file through an O_PATH fd: EBADF" "error: EBADF" \
	"$(as_nobody "$FILL" "$M/t" secret.bin open=path 2>&1)"
check "the tensor unchanged" cmp before.bin "$M/t"
eq "another user: its own write-only file: EBADF" "error: EBADF" \
	"$(as_nobody "$FILL" "$M/t" wo.bin open=wronly 2>&1)"
check "the tensor unchanged" cmp before.bin "$M/t"
eq "root without capabilities cannot open a 0000 file itself (control)" "error: EACCES" \
	"$(no_caps "$FILL" "$M/t" sealed.bin 2>&1)"
eq "root without capabilities: the 0000 file through an O_PATH fd: EBADF" "error: EBADF" \
	"$(no_caps "$FILL" "$M/t" sealed.bin open=path 2>&1)"
check "the tensor unchanged" cmp before.bin "$M/t"
eq "a group's file, opened through the group" ok \
	"$(setpriv --reuid=65534 --regid=65534 --groups=100 "$FILL" "$M/t" grp.bin 2>&1)"
check "its bytes" cmp grp.bin "$M/t"
eq "another user: a file anyone reads" ok "$(as_nobody "$FILL" "$M/t" pub.bin 2>&1)"
check "its bytes" cmp pub.bin "$M/t"
check "root's own fill" "$FILL" "$M/t" secret.bin
check "its bytes" cmp secret.bin "$M/t"
finish
