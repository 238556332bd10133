# Bad dtypes and shapes are EINVAL and change nothing; 16 dimensions are the most a
# shape takes.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
make_t23
check_err "unknown dtype: EINVAL" "Invalid argument" setfattr -n user.tensor.dtype -v f33 "$M/t"
unchanged "unknown dtype"
check_err "empty dtype: EINVAL" "Invalid argument" setfattr -n user.tensor.dtype -v '' "$M/t"
for bad in '[-1]' '[1.5]' '[a]' '[1,,2]' '[1' '' '[2]x' '1 2' '[18446744073709551616]'; do
	check_err "shape '$bad': EINVAL" "Invalid argument" setfattr -n user.tensor.shape -v "$bad" "$M/t"
done
unchanged "bad shapes"
check_err "shape overflowing 64 bits: EINVAL" "Invalid argument" setfattr -n user.tensor.shape -v '[4294967296,4294967296,16]' "$M/t"
check_err "17 dims: EINVAL" "Invalid argument" setfattr -n user.tensor.shape -v '[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]' "$M/t"
check "16 dims accepted" setfattr -n user.tensor.shape -v '[1,1,1,1,1,1,1,1,1,1,1,1,1,1,2,3]' "$M/t"
check "back to [2,3]" setfattr -n user.tensor.shape -v '[2,3]' "$M/t"
finish
