# The handle, both ways: bytes written by cp are what the mapping holds, and bytes
# written through the mapping are what read() returns (no stale cache).
. "$(dirname "$0")/../lib.sh"
one_mount
head -c 5000 /dev/urandom > "$T/src"
cp "$T/src" "$M/h"
mapped_equal() { map_dump "$M/h" | cmp -s - "$T/src"; }
read_sees_fill() { head -c 5000 /dev/zero | tr '\0' Z | cmp -s - "$M/h"; }
check "mapped bytes equal what cp wrote" mapped_equal
check "fill through the mapping" map_fill "$M/h" 90
check "read() sees the mapping's bytes at once" read_sees_fill
rm "$M/h"
eq "statfs back to zero" 0 "$(used_bytes "$M")"
finish
