# Metadata remembered between opens (lib/meta_cache.c): every change still shows (reshape,
# dtype, growth, a new tensor or a rename onto the name); only an unchanged one is reused.
. "$(dirname "$0")/../lib.sh"
client_mount
f32_23 "$M/re"
reopen() { out "$TOOL" reopen "$1" "$2" | head -3 | paste -sd'|'; }
eq "reopen: a reshape to the same byte count shows" "f32 [2,3] 24 host ro|f32 [3,2] 24 host ro|remembered 0" \
	"$(reopen "$M/re" "setfattr -n user.tensor.shape -v '[3,2]' $M/re")"
eq "reopen: a dtype of the same size shows" "f32 [3,2] 24 host ro|i32 [3,2] 24 host ro|remembered 0" \
	"$(reopen "$M/re" "setfattr -n user.tensor.dtype -v i32 $M/re")"
eq "reopen: a write that grows the tensor shows" "i32 [3,2] 24 host ro|i32 [7] 28 host ro|remembered 0" \
	"$(reopen "$M/re" "printf abcd >> $M/re")"
eq "reopen: a new tensor under the same name shows" "i32 [7] 28 host ro|u8 [5] 5 host ro|remembered 0" \
	"$(reopen "$M/re" "rm $M/re && printf 12345 > $M/re")"
eq "reopen: a tensor renamed onto the name shows" "u8 [5] 5 host ro|u8 [3] 3 host ro|remembered 0" \
	"$(reopen "$M/re" "printf xyz > $M/re2 && mv $M/re2 $M/re")"
eq "reopen: unchanged, the metadata is remembered" "u8 [3] 3 host ro|u8 [3] 3 host ro|remembered 1" "$(reopen "$M/re" true)"
finish
