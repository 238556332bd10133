# Memory in use shows in statfs, and rm -rf of tensors, directories and an unlinked open
# tensor gives every byte, record and shared-memory object back.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
head -c 3000000 /dev/urandom > "$M/a"
mkdir -p "$M/d/e"; echo x > "$M/d/e/t"
exec 5<"$M/a"
rm "$M/a"
exec 5<&-
echo y > "$M/b"
in_use() { [ "$(stat -f -c '%b' "$M")" -gt "$(stat -f -c '%f' "$M")" ]; }
check "statfs reports memory in use" in_use
check "rm -rf everything" rm -rf "$M"/b "$M"/d
check_nothing_left "$M"
finish
