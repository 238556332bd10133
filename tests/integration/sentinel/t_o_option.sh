# A sentinel:// URL given as a mount option (-o redis=..., as fstab does): the commas between
# sentinels written as "\," so that the option list is not cut there; the other options of
# the list still apply.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/group.sh"
sentinel_group 1000 || exit 1
M=$T/m
mkdir -p "$M"
"$TFS" -f -o "redis=${SURL//,/\\,},node=nx" --log "$T/m.log" "$M" & MNT_PID[$M]=$!
check "-o redis=sentinel://... mounts" waits_for 60 mountpoint -q "$M"
check "it serves" sh -c "echo hi > '$M/x'"
eq "the record is on the primary, of node nx" nx "$(rcli hget tensorfs:tensor:x node)"
finish
