# Shapes whose byte count does not fit memory, nor a page-rounded size, nor a signed 64-bit
# file size: refused with an errno (EINVAL, EFBIG, ENOSPC), nothing changes, and the
# daemon (the sanitizer build's too, where one overflow in the backend's charge killed it)
# goes on serving (issue 32, item 10).
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --backend host
d0=$(daemon_pid "$M")
# refused SHAPE DTYPE: setting SHAPE on a DTYPE tensor fails with a clean errno and
# leaves the tensor as it was.
refused() {
	local out
	rm -f "$M/t"
	printf 'abcdefgh' > "$M/t"
	setfattr -n user.tensor.dtype -v "$2" "$M/t" || { nok "dtype $2"; return; }
	if out=$(setfattr -n user.tensor.shape -v "$1" "$M/t" 2>&1); then
		nok "shape $1 of $2: accepted"
		return
	fi
	case "$out" in
		*"Invalid argument"*|*"File too large"*|*"No space left"*|*"Value too large"*)
			ok "shape $1 of $2: refused (${out##*: })";;
		*) nok "shape $1 of $2: $out";;
	esac
	eq "shape $1 of $2: the size stays" 8 "$(size_of "$M/t")"
	eq "shape $1 of $2: the bytes stay" abcdefgh "$(cat "$M/t")"
}
for s in '[9223372036854775807]' '[9223372036854775806]' '[9223372036854775000]' \
	 '[4611686018427387904,2]' '[9223372036854771713]' '[18446744073709551615]' \
	 '[3037000500,3037000500]' '[1099511627776]'; do
	refused "$s" uint8
done
refused '[4611686018427387904]' float16
refused '[2305843009213693952]' float32
refused '[1152921504606846976]' float64
eq "the daemon did not die" "$d0" "$(daemon_pid "$M")"
check "the mount still serves" serves_within 20 "$M"
printf 'fine' > "$M/u"
eq "a tensor written after them reads back" fine "$(cat "$M/u")"
rm -f "$M/t" "$M/u"
check_nothing_left "$M"
finish
