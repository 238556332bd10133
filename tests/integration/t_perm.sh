# Permissions are enforced on bytes and on the handle (--allow-other, another uid through
# setpriv), chmod/chown follow into the host backend's shared-memory object, and the host
# handle maps the tensor in another process both ways.
. "$(dirname "$0")/lib.sh"
start_redis || exit 1
chmod 755 "$T"
M=$T/m
mount_tfs "$M" --allow-other || exit 1
cd "$T"
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
SHM_MAP="$HELPERS/shm_map"

head -c 5000 /dev/urandom > "$T/src"
cp "$T/src" "$M/a"
chmod 600 "$M/a"
check_err "other uid: read refused" "Permission denied" $NOBODY cat "$M/a"
check_err "other uid: handle refused" "Permission denied" $NOBODY getfattr -n user.tensor.ipc_handle "$M/a"
check_err "other uid: write refused" "Permission denied" $NOBODY bash -c "echo x > '$M/a'"
check_err "other uid: chmod refused" "Operation not permitted" $NOBODY chmod 666 "$M/a"
check_err "other uid: cannot create in root's directory" "Permission denied" $NOBODY touch "$M/b"
if [ "$BACKEND" = host ]; then
	shm=$(getfattr --absolute-names --only-values -n user.tensor.ipc_handle "$M/a" | tail -c +9 | tr -d '\0')
	eq "shm object follows the mode (600)" "600 0" "$(stat -c '%a %u' "/dev/shm/${shm#/}")"
	check_err "other uid: cannot map the shm object either" "Permission denied" $NOBODY "$SHM_MAP" "$M/a" dump
fi

chmod 644 "$M/a"
[ "$BACKEND" = host ] && eq "after chmod 644: the shm object is 644" 644 "$(stat -c %a "/dev/shm/${shm#/}")"
check "other uid: reads after chmod 644" bash -c "$NOBODY cat '$M/a' | cmp -s - '$T/src'"
check "other uid: maps the handle and reads the bytes" bash -c "$NOBODY bash -c \"map_dump '$M/a'\" | cmp -s - '$T/src'"
check_err "other uid: still cannot write" "Permission denied" $NOBODY bash -c "echo x >> '$M/a'"

chown 65534:65534 "$M/a"
eq "chown shows in stat" "65534 65534" "$(stat -c '%u %g' "$M/a")"
eq "chown shows in Redis" "65534" "$(rcli hget tensorfs:tensor:a uid)"
[ "$BACKEND" = host ] && eq "shm object follows the owner" 65534 "$(stat -c %u "/dev/shm/${shm#/}")"
check "new owner writes" $NOBODY dd if=/dev/zero of="$M/a" bs=100 count=1 conv=notrunc status=none

mkdir "$M/d" && chown 65534 "$M/d"
check "other uid creates in its own directory" $NOBODY bash -c "echo hi > '$M/d/mine'"
eq "created tensor owned by its creator" 65534 "$(stat -c %u "$M/d/mine")"

# The handle, both ways: bytes written by cp are what the mapping holds, and bytes
# written through the mapping are what read() returns (no stale cache).
cp "$T/src" "$M/h"
check "mapped bytes equal what cp wrote" bash -c "map_dump '$M/h' | cmp -s - '$T/src'"
check "fill through the mapping" map_fill "$M/h" 90
check "read() sees the mapping's bytes at once" bash -c "head -c 5000 /dev/zero | tr '\\0' Z | cmp -s - '$M/h'"
rm "$M/h" "$M/a" "$M/d/mine"
rmdir "$M/d"
eq "statfs back to zero" 0 "$(used_bytes "$M")"
cd /
finish
