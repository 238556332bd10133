# chown shows in stat and in Redis, the host backend's shared-memory object follows the
# owner, and the new owner can write.
. "$(dirname "$0")/../lib.sh"
other_uid_mount
head -c 5000 /dev/urandom > "$M/a"
chmod 644 "$M/a"
chown 65534:65534 "$M/a"
eq "chown shows in stat" "65534 65534" "$(stat -c '%u %g' "$M/a")"
eq "chown shows in Redis" "65534" "$(rcli hget tensorfs:tensor:a uid)"
[ "$BACKEND" = host ] && eq "shm object follows the owner" 65534 "$(stat -c %u "$(shm_of "$M/a")")"
check "new owner writes" $NOBODY dd if=/dev/zero of="$M/a" bs=100 count=1 conv=notrunc status=none
finish
