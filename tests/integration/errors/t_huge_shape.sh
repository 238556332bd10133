# Shapes whose byte count does not fit memory, nor a page-rounded size, nor a signed 64-bit
# file size: refused with an errno (EINVAL, EFBIG, ENOSPC), nothing changes, and the
# daemon (the sanitizer build's too, where one overflow in the backend's charge killed it)
# goes on serving (issue 32, item 10).
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --backend host
d0=$(daemon_pid "$M")
# refused SHAPE DTYPE [BYTES]: setting SHAPE on a DTYPE tensor of BYTES (none: an empty
# one, which has no memory yet) fails with a clean errno and leaves the tensor as it was.
refused() {
	local out b=${3:-} what="shape $1 of an ${3:-empty} $2 tensor"
	rm -f "$M/t"
	printf '%s' "$b" > "$M/t"
	setfattr -n user.tensor.dtype -v "$2" "$M/t" || { nok "dtype $2"; return; }
	if out=$(setfattr -n user.tensor.shape -v "$1" "$M/t" 2>&1); then
		nok "$what: accepted"
		return
	fi
	case "$out" in
		*"Invalid argument"*|*"File too large"*|*"No space left"*|*"Value too large"*)
			ok "$what: refused (${out##*: })";;
		*) nok "$what: $out";;
	esac
	eq "$what: the size stays" "${#b}" "$(size_of "$M/t")"
	eq "$what: the bytes stay" "$b" "$(cat "$M/t")"
}
for s in '[9223372036854775807]' '[9223372036854775806]' '[9223372036854775000]' \
	 '[4611686018427387904,2]' '[9223372036854771713]' '[18446744073709551615]' \
	 '[3037000500,3037000500]' '[1099511627776]'; do
	refused "$s" uint8
	refused "$s" uint8 abcdefgh
done
for d in float16:4611686018427387904 float32:2305843009213693952 float64:1152921504606846976; do
	refused "[${d#*:}]" "${d%%:*}"
	refused "[${d#*:}]" "${d%%:*}" abcdefgh
done
eq "the daemon did not die" "$d0" "$(daemon_pid "$M")"
check "the mount still serves" serves_within 20 "$M"
printf 'fine' > "$M/u"
eq "a tensor written after them reads back" fine "$(cat "$M/u")"
rm -f "$M/t" "$M/u"
check_nothing_left "$M"
finish
