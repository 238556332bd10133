# After chmod 644 another uid reads the bytes and maps the handle (the host backend's
# shared-memory object follows the mode), and still cannot write.
. "$(dirname "$0")/../lib.sh"
other_uid_mount
head -c 5000 /dev/urandom > "$T/src"
cp "$T/src" "$M/a"
chmod 600 "$M/a"
chmod 644 "$M/a"
append_a() { echo x >> "$M/a"; }
export M; export -f append_a
reads() { $NOBODY cat "$M/a" | cmp -s - "$T/src"; }
maps() { $NOBODY bash -c 'map_dump "$M/a"' | cmp -s - "$T/src"; }
[ "$BACKEND" = host ] && eq "after chmod 644: the shm object is 644" 644 "$(stat -c %a "$(shm_of "$M/a")")"
check "other uid: reads after chmod 644" reads
check "other uid: maps the handle and reads the bytes" maps
check_err "other uid: still cannot write" "Permission denied" $NOBODY bash -c append_a
finish
