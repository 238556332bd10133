# A reshape to the same byte count keeps the bytes, a dtype change reinterprets them, and
# a scalar shape [] holds one element.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
reshape_keeps() {
	touch "$M/r" && setfattr -n user.tensor.dtype -v u8 "$M/r" && setfattr -n user.tensor.shape -v '[4,4]' "$M/r" &&
		printf 'ABCDEFGHIJKLMNOP' | dd of="$M/r" conv=notrunc status=none &&
		setfattr -n user.tensor.shape -v '[2,8]' "$M/r" && [ "$(cat "$M/r")" = ABCDEFGHIJKLMNOP ]
}
dtype_reinterprets() {
	setfattr -n user.tensor.dtype -v f32 "$M/r" && [ "$(xget "$M/r" shape)" = '[2,2]' ] &&
		[ "$(cat "$M/r")" = ABCDEFGHIJKLMNOP ]
}
scalar() {
	touch "$M/s" && setfattr -n user.tensor.dtype -v f64 "$M/s" && setfattr -n user.tensor.shape -v '[]' "$M/s" &&
		[ "$(size_of "$M/s")" = 8 ]
}
check "reshape keeps data" reshape_keeps
check "dtype change reinterprets (u8 [2,8] -> f32 [2,2])" dtype_reinterprets
check "scalar shape []" scalar
finish
