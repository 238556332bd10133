# tensorctl create: dtype, shape (a scalar too), a device; a taken name, a bad dtype or
# shape, a missing device or no room fail with one message and leave nothing.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
check "create f32 2,3,4" "$CTL" create "$M/a" --dtype f32 --shape 2,3,4
eq "created shape" "[2,3,4]" "$(xget "$M/a" shape)"
eq "created dtype" f32 "$(xget "$M/a" dtype)"
eq "created size" 96 "$(size_of "$M/a")"
check "create --shape [] --device 0" "$CTL" create "$M/sc" --dtype bfloat16 --shape '[]' --device 0
eq "scalar bf16 is 2 bytes" 2 "$(size_of "$M/sc")"
fails_with "create over an existing name" "File exists" "$CTL" create "$M/a" --dtype f32 --shape 2
fails_with "create with a bad dtype" "unknown dtype" "$CTL" create "$M/q" --dtype f33 --shape 2
fails_with "create with a bad shape" "bad shape" "$CTL" create "$M/q" --dtype f32 --shape 2,-3
gone "$M/q" "bad create"
fails_with "create on a missing device" "device 7" "$CTL" create "$M/q" --dtype f32 --shape 2 --device 7
gone "$M/q" "create on a missing device"
fails_with "create larger than the device" "No space left" "$CTL" create "$M2/big" --dtype f32 --shape 1024,1024
gone "$M2/big" "create larger than the device"
finish
