# Bytes in and out with the usual tools: cp, dd (whole, in the middle), truncate both
# ways, a write that keeps the dtype, echo and cat.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
head -c 3000000 /dev/urandom > "$T/rand"
middle_changed_rest_kept() {
	cmp -s <(head -c 5000 "$T/rand") <(head -c 5000 "$M/dd") &&
		[ "$(dd if="$M/dd" bs=1000 skip=5 count=1 status=none | tr -d '\0' | wc -c)" = 0 ] &&
		cmp -s <(tail -c +6001 "$T/rand") <(tail -c +6001 "$M/dd")
}
grown_part_zero() {
	[ "$(tail -c 4000 "$M/dd" | tr -d '\0' | wc -c)" = 0 ] && cmp -s <(head -c 1000 "$T/rand") <(head -c 1000 "$M/dd")
}
f32_write_keeps_f32() {
	touch "$M/f" && setfattr -n user.tensor.dtype -v f32 "$M/f" && head -c 8 /dev/urandom > "$M/f" &&
		[ "$(xget "$M/f" shape)" = '[2]' ] && [ "$(xget "$M/f" dtype)" = f32 ]
}
echo_and_cat() { echo hello > "$M/h" && [ "$(cat "$M/h")" = hello ]; }

check "cp a file in" cp "$T/rand" "$M/w"
check "cmp after cp" cmp "$T/rand" "$M/w"
eq "cp'd file is 1-D u8" "[3000000]" "$(xget "$M/w" shape)"
check "dd with 1 MiB blocks" dd if="$T/rand" of="$M/dd" bs=1M status=none
check "cmp after dd" cmp "$T/rand" "$M/dd"
check "dd write in the middle" dd if=/dev/zero of="$M/dd" bs=1000 seek=5 count=1 conv=notrunc status=none
check "middle bytes changed, rest kept" middle_changed_rest_kept
check "truncate shrinks" truncate -s 1000 "$M/dd"
eq "size after truncate" 1000 "$(size_of "$M/dd")"
check "truncate grows with zeros" truncate -s 5000 "$M/dd"
check "grown part is zero" grown_part_zero
check "f32 file of 8 bytes keeps f32" f32_write_keeps_f32
check "echo and cat" echo_and_cat
finish
