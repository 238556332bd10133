# Without --device, new tensors go to the lowest GPU that --devices names: "--devices 1"
# alone mounts (it was refused: "--device 0 is not one of --devices 1"), and a tensor
# made without a device lands on 1. --device given outside the list is still refused, and
# a list of no GPU says that new tensors need one. The
# host backend stands in two devices (-o host_devices=2).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
cd "$T" || exit 1
M=$T/m
mount_tfs "$M" --backend host -o host_devices=2 --devices 1 || exit 1
check "--devices 1 without --device mounts" mountpoint -q "$M"
truncate -s 1M "$M/t"
eq "a new tensor lands on device 1" 1 "$(xget "$M/t" device)"
eq "its record says so" 1 "$(rcli hget tensorfs:tensor:t device)"
umount_tfs "$M"
mkdir -p "$T/x"
check_err "--device 0 with --devices 1: refused" "--device 0 is not one of --devices 1" \
	timeout 30 "$TFS" -f --redis "$URL" --backend host -o host_devices=2 --devices 1 --device 0 "$T/x"
check_err "--devices cpu alone: refused, no GPU to default to" "--devices cpu names no GPU" \
	timeout 30 "$TFS" -f --redis "$URL" --backend host -o host_devices=2 --devices cpu "$T/x"
eq "nothing is mounted after the refusals" 0 "$(grep -c " $T/x " /proc/mounts)"
finish
