# A load that cannot go where it is sent: an existing tensor or directory (untouched), a
# path off any mount, a missing source, no room (raw, safetensors): one message, nothing
# left, no memory held on the full mount.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
"$CTL" create "$M/a" --dtype f32 --shape 2,3,4
"$CTL" load m.safetensors "$M/m"
mkdir -p "$T/plain"
head -c 2000000 /dev/urandom > two.bin
fails_with "destination exists (tensor)" "File exists" "$CTL" load a.npy "$M/a"
eq "existing tensor untouched" "[2,3,4]" "$(xget "$M/a" shape)"
fails_with "destination exists (directory)" "File exists" "$CTL" load m.safetensors "$M/m"
fails_with "unmounted path" "not on a tensorfs mount" "$CTL" load a.npy "$T/plain/x"; gone "$T/plain/x" "unmounted path"
fails_with "ls of an unmounted path" "not on a tensorfs mount" "$CTL" ls "$T/plain"
fails_with "missing source file" "No such file" "$CTL" load nope.npy "$M/t5"; gone "$M/t5" "missing source"
fails_with "no space on the device (raw)" "No space left" "$CTL" load two.bin "$M2/two"; gone "$M2/two" "no space (raw)"
fails_with "no space on the device (safetensors)" "No space left" "$CTL" load toobig.safetensors "$M2/tb"; gone "$M2/tb" "no space (safetensors)"
eq "the small mount holds nothing after the failures" "" "$(ls -A "$M2")"
eq "no memory left in use on the small mount" 0 "$(used_bytes "$M2")"
finish
