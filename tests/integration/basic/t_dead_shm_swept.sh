# A daemon killed without unmounting leaves its shared memory in /dev/shm; the next daemon
# to start removes what belongs to dead pids (else a reused pid finds its names taken).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
sh -c 'exit 0' & dead=$!; wait $dead
head -c 4096 /dev/zero > "/dev/shm/tensorfs.$dead.1"
mount_tfs "$M" --node n1 || exit 1
if [ "$BACKEND" = host ]; then
	# The backend starts just after the mount appears.
	check "a dead daemon's leftover shared memory is removed at start" soon test ! -e "/dev/shm/tensorfs.$dead.1"
	check "and logged" soon grep -q "died without unmounting" "$T/m.log"
else
	echo "skip - a dead daemon's leftover shared memory is removed at start: the $BACKEND backend uses no /dev/shm"
	rm -f "/dev/shm/tensorfs.$dead.1"
fi
finish
