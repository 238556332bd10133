# The owner of a host tensor grows its memory object (a sparse ftruncate costs it nothing)
# and the daemon starts again: the adopted tensor is charged what its record says, not what
# the object claims, so other users can still allocate (issue 32, item 1).
. "$(dirname "$0")/../lib.sh"
other_uid_mount --backend host --max-bytes 64M
if [ "$BACKEND" != host ]; then
	echo "skip - a host tensor's memory object: the $BACKEND backend has none"
	finish
	exit
fi
EXPECT_RESTARTS=1
mkdir -m 1777 "$M/pub"
mine=$M/pub/mine
check "the other uid writes a tensor of its own" $NOBODY sh -c "printf mine > '$mine'"
obj=$(shm_of "$mine")
$NOBODY truncate -s 1T "$obj" 2>/dev/null
echo "# the object is now $(stat -c %s "$obj" 2>/dev/null) bytes"
head -c 1000000 /dev/urandom > "$T/r"
cp "$T/r" "$M/r1"
check "a daemon killed afterwards is served again" kill9_and_serve "$M"
check "root's tensor keeps its bytes" cmp -s "$T/r" "$M/r1"
used=$(used_bytes "$M")
check "statfs counts what the records say, not the grown object ($used bytes used)" test "$used" -lt $((16 << 20))
check "root can still make a 32 MiB tensor" dd if=/dev/zero of="$M/big" bs=1M count=32 status=none
eq "the other uid's tensor reads as before" mine "$($NOBODY cat "$mine" 2>&1)"
check "its tensor can be written" $NOBODY sh -c "printf again > '$mine'"
rm -rf "$M/pub" "$M/r1" "$M/big"
check_nothing_left "$M"
finish
