# user.tensor.shape also takes "DTYPE SHAPE" (core/shape.h, tfs_shape_parse_typed): a
# tensor typed and sized in one request, as tfs_load's creates do. A plain shape keeps the
# dtype; a bad typed value is refused (EINVAL) and changes nothing; a directory refuses it.
. "$(dirname "$0")/../lib.sh"
one_mount
touch "$M/a"
check "set 'bf16 [4,3]'" setfattr -n user.tensor.shape -v "bf16 [4,3]" "$M/a"
eq "its dtype" bf16 "$(xget "$M/a" dtype)"
eq "its shape" "[4,3]" "$(xget "$M/a" shape)"
eq "its size" 24 "$(size_of "$M/a")"
check "a plain shape after it" setfattr -n user.tensor.shape -v "[2,2]" "$M/a"
eq "keeps the dtype" bf16 "$(xget "$M/a" dtype)"
eq "its size" 8 "$(size_of "$M/a")"
check "an alias, a bare list" setfattr -n user.tensor.shape -v "float32 5" "$M/a"
eq "its dtype" f32 "$(xget "$M/a" dtype)"
eq "its size" 20 "$(size_of "$M/a")"
for v in "bf16[2]" "nope [2]" "bf16 " "f32 [2,x]"; do
	check_err "'$v' refused" "Invalid argument" setfattr -n user.tensor.shape -v "$v" "$M/a"
	eq "'$v' changes nothing" "f32 [5]" "$(xget "$M/a" dtype) $(xget "$M/a" shape)"
done
mkdir "$M/d"
check_err "a directory refuses it" "Invalid argument" setfattr -n user.tensor.shape -v "f32 [2]" "$M/d"
finish
