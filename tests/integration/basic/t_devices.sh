# --devices limits the devices tensors may live on: a list that names a device not present,
# or that the default device is not in, fails the mount with a message; a tensor's device
# must be served (EINVAL otherwise); statfs and the stats attribute report each device.
# The host backend has one device, 0: what more devices do runs in tests/gpu/t_multi_gpu.sh.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
cd "$T" || exit 1
bad_mount() {
	mkdir -p "$T/x"
	timeout 30 "$TFS" -f --redis "$URL" "$@" "$T/x"
}
# one device past the last: the host backend has one, the cuda backend one per GPU
nd=1
[ -e /dev/nvidiactl ] && nd=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$nd" -ge 1 ] || nd=1
check_err "--devices $nd: no device $nd, mount fails" "no device $nd" bad_mount --devices "$nd"
check_err "--devices 0,0: not a list, mount fails" "is not a list of GPU ordinals" bad_mount --devices 0,0
check_err "--devices= (empty): mount fails" "is not a list of GPU ordinals" bad_mount --devices=
check_err "-o devices=x: mount fails" "is not a list of GPU ordinals" bad_mount -o devices=x
eq "nothing is mounted after the refusals" 0 "$(grep -c " $T/x " /proc/mounts)"
eq "no records were written" "" "$(rcli --scan --pattern 'tensorfs:*')"

M=$T/m
mount_tfs "$M" --devices=0 --max-bytes 64M || exit 1
check "the --devices=0 spelling mounts (it also begins with --device)" mountpoint -q "$M"
truncate -s 1M "$M/t"
check_err "user.tensor.device 1 on a tensor: EINVAL" "Invalid argument" setfattr -n user.tensor.device -v 1 "$M/t"
mkdir "$M/d"
check_err "user.tensor.device 1 as a directory default: EINVAL" "Invalid argument" setfattr -n user.tensor.device -v 1 "$M/d"
check "user.tensor.device 0 as a directory default" setfattr -n user.tensor.device -v 0 "$M/d"
truncate -s 3M "$M/d/u"
eq "statfs of a directory placed on device 0: its 64 MiB" "$((64 << 20))" "$(( $(stat -f -c '%b*%S' "$M/d") ))"
stats=$(getfattr --only-values -n user.tensorfs.stats "$M")
# Used blocks are what the backend holds for the tensors: their 4 MiB on host, whole
# pooled blocks on cuda; the stats attribute reports the same figure for the device.
eq "statfs of a tensor: its device's used bytes, as the stats attribute has them" \
	"$(/usr/bin/python3 -c 'import json,sys; print(json.loads(sys.argv[1])["devices"][0]["reserved"])' "$stats")" \
	"$(( $(stat -f -c '(%b-%f)*%S' "$M/d/u") ))"
eq "the stats attribute lists device 0 and only it" "[0]" \
	"$(/usr/bin/python3 -c 'import json,sys; print([d["device"] for d in json.loads(sys.argv[1])["devices"]])' "$stats" | tr -d ' ')"
eq "device 0's figures: total and used bytes" "$((64 << 20)) $((4 << 20))" \
	"$(/usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1])["devices"][0]; print(d["total"], d["used"])' "$stats")"
umount_tfs "$M"

mount_tfs "$M" -o devices=0 || exit 1
check "the fstab spelling -o devices=0 mounts" mountpoint -q "$M"
umount_tfs "$M"
finish
