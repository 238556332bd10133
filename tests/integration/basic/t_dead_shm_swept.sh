# A daemon killed without unmounting leaves its shared memory in /dev/shm; the next daemon
# to start removes what belongs to dead pids (else a reused pid finds its names taken):
# a keeper's directory with the objects in it, and an older daemon's single object. A
# link planted in such a directory goes, not what it points to.
# tfs-test: alone (any daemon that starts sweeps every dead pid's objects: beside others, another test's daemon may sweep these first)
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
sh -c 'exit 0' & dead=$!; wait $dead
dir=/dev/shm/tensorfs.$dead.0badf00d
head -c 4096 /dev/zero > "/dev/shm/tensorfs.$dead.1"
mkdir -m 711 "$dir"
head -c 4096 /dev/zero > "$dir/0123456789abcdef01234567"
echo keep > "$T/target"
ln -s "$T/target" "$dir/00000000000000000000beef"
mount_tfs "$M" --node n1 || exit 1
if [ "$BACKEND" = host ]; then
	# The backend starts just after the mount appears.
	check "a dead daemon's leftover shared memory is removed at start" soon test ! -e "/dev/shm/tensorfs.$dead.1"
	check "a dead keeper's directory is removed with its objects" soon test ! -e "$dir"
	eq "what a link in it pointed to is left alone" keep "$(cat "$T/target")"
	check "and logged" soon grep -q "died without unmounting" "$T/m.log"
else
	echo "skip - a dead daemon's leftover shared memory is removed at start: the $BACKEND backend uses no /dev/shm"
	rm -rf "/dev/shm/tensorfs.$dead.1" "$dir"
fi
finish
