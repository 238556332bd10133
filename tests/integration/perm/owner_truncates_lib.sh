# Shared by perm/t_owner_truncates*.sh, sourced after ../lib.sh with the mount at $M up
# (other_uid_mount): the owner of a host tensor, uid 65534, shrinks the memory behind it
# by every route it has, then writes and reads it through the mount. The daemon must live
# on (the same pid: the keeper would start a new one after a fault), root's tensors keep
# their bytes, and the damaged tensor answers its bytes or an error (issue 32, item 1).
if [ "$BACKEND" != host ]; then
	echo "skip - a host tensor's memory object: the $BACKEND backend has none"
	finish
	exit
fi
d0=$(daemon_pid "$M")
for i in 1 2 3 4 5; do
	head -c $((100000 * i)) /dev/urandom > "$T/r$i"
	cp "$T/r$i" "$M/r$i"
done
mkdir -m 1777 "$M/pub"
mine=$M/pub/mine
check "the other uid writes a tensor of its own" $NOBODY sh -c "head -c 300000 /dev/zero | tr '\\0' x > '$mine'"
obj=$(shm_of "$mine")
export obj mine

# Route 1: the object's name in /dev/shm, opened for writing and shrunk.
$NOBODY truncate -s 0 "$obj" 2>/dev/null
$NOBODY truncate -s 4096 "$obj" 2>/dev/null
# Route 2: the descriptors and mappings of the daemon and the keeper in /proc.
shrink_proc() {
	local p f
	for p in "$@"; do
		for f in /proc/$p/fd/* /proc/$p/map_files/*; do
			truncate -s 0 "$f" 2>/dev/null && echo "$f"
		done
	done
	return 0
}
export -f shrink_proc
eq "the other uid shrinks nothing through /proc of the daemon or keeper" "" \
	"$($NOBODY bash -c "shrink_proc $d0 ${MNT_PID[$M]}")"
# Route 3: a mapping of its own, made through the handle as a client does, then the
# descriptor it opened on the way (the library closes its own after mmap).
$NOBODY sh -c 'exec 3<>"$obj" && truncate -s 0 /proc/self/fd/3' 2>/dev/null

# Then the tensor is used through the mount: a read first (over io_uring the daemon
# copies the reply out of the object), then writes (the daemon copies into it).
r=$($NOBODY dd if="$mine" bs=65536 count=1 status=none 2>/dev/null | head -c 4 | od -An -c | tr -d ' ')
case "$r" in
	""|"\0\0\0\0"|xxxx) ok "the shrunk tensor reads as an error or its bytes ('$r')";;
	*) nok "the shrunk tensor reads '$r'";;
esac
eq "the daemon lives on after the read" "$d0" "$(daemon_pid "$M")"
w_rc=0; $NOBODY dd if=/dev/zero of="$mine" bs=4096 count=8 conv=notrunc status=none 2>/dev/null || w_rc=$?
eq "the daemon lives on after the write" "$d0" "$(daemon_pid "$M")"
$NOBODY dd if=/dev/zero of="$mine" bs=4096 seek=20 count=8 conv=notrunc status=none 2>/dev/null
$NOBODY cat "$mine" >/dev/null 2>&1
dd if="$mine" of=/dev/null bs=1M status=none 2>/dev/null
echo "# write exit status $w_rc, first bytes read '$r'"
eq "the daemon says once which object lost pages" 1 "$(grep -c "lost pages under the daemon" "$T/m.log")"
check "the mount still serves" serves_within 20 "$M"
eq "the daemon did not die" "$d0" "$(daemon_pid "$M")"
check "the keeper lives" kill -0 "${MNT_PID[$M]}"
for i in 1 2 3 4 5; do
	check "root's tensor r$i keeps its bytes" cmp -s "$T/r$i" "$M/r$i"
done
# A daemon that starts again adopts what the keeper holds: the shrunk object is refused
# (its record dropped, as for memory that is gone), and only it.
EXPECT_RESTARTS=1
check "a daemon killed afterwards is served again" kill9_and_serve "$M"
for i in 1 2 3 4 5; do
	check "after the restart root's tensor r$i keeps its bytes" cmp -s "$T/r$i" "$M/r$i"
done
$NOBODY cat "$mine" >/dev/null 2>&1
check "the mount still serves after the damaged tensor is read again" serves_within 20 "$M"
check "root still writes a new tensor" cp "$T/r2" "$M/r6"
check "and reads it back" cmp -s "$T/r2" "$M/r6"
check "the damaged tensor can be removed" $NOBODY rm -f "$mine"
check "a new one in its place works" $NOBODY sh -c "printf again > '$mine' && test \"\$(cat '$mine')\" = again"
rm -rf "$M"/r* "$M/pub"
check_nothing_left "$M"
finish
