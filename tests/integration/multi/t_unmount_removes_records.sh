# A clean unmount removes that node's records: the other node no longer lists them.
. "$(dirname "$0")/../lib.sh"
two_nodes
mkdir "$B/shared"
echo hi > "$B/shared/y"
n2_records() { for k in $(rcli --scan --pattern 'tensorfs:tensor:*'); do rcli hget "$k" node; done | grep n2; }
y_unlisted() { ! ls "$A/shared" | grep -q y; }
umount_tfs "$B"
eq "n2's records gone after unmount" "" "$(n2_records)"
check "n2's tensors unlisted" y_unlisted
finish
