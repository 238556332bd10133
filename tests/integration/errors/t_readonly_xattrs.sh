# The attributes the daemon computes are read-only (EPERM), unknown names are EINVAL or
# ENOTSUP, a device that does not exist is EINVAL; none of them changes the record.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
make_t23
for ro in bytes ipc_handle ipc_offset refcount ctime node meta; do
	check_err "write read-only $ro: EPERM" "Operation not permitted" setfattr -n user.tensor.$ro -v 1 "$M/t"
done
unchanged "read-only writes"
check_err "unknown user.tensor.* name: EINVAL" "Invalid argument" setfattr -n user.tensor.colour -v red "$M/t"
check_err "trusted.* xattr: ENOTSUP" "Operation not supported" setfattr -n trusted.x -v 1 "$M/t"
check_err "device out of range: EINVAL" "Invalid argument" setfattr -n user.tensor.device -v 7 "$M/t"
check "setting the same device on an allocated tensor is fine" setfattr -n user.tensor.device -v 0 "$M/t"
finish
