# A reshape through this kernel changes the size the kernel would otherwise keep.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
touch "$M/s"; size_of "$M/s" > /dev/null
setfattr -n user.tensor.shape -v '[32]' "$M/s"
eq "reshape through the mount: stat sees the new size" 32 "$(size_of "$M/s")"
finish
