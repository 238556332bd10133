# Another user who creates the host backend's next object names in /dev/shm first does
# not block allocations: the names have a random part (issue 15, item 8).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --backend host || exit 1
pid=${MNT_PID[$M]}
for i in $(seq 1 40); do
	setpriv --reuid=65534 --regid=65534 --clear-groups touch "/dev/shm/tensorfs.$pid.$i"
done
check "tensors are still made and filled" sh -c "for i in \$(seq 10); do printf abcd > '$M/t'\$i || exit 1; done"
eq "and read back" abcd "$(cat "$M/t7")"
rm -f "$M"/t*
for i in $(seq 1 40); do rm -f "/dev/shm/tensorfs.$pid.$i"; done
finish
