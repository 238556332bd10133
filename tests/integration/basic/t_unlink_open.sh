# rm of an open tensor: the name goes at once (and can be reused), the record moves off
# it, the descriptor still reads every byte, and the last close frees it.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
head -c 3000000 /dev/urandom > "$T/rand"
cp "$T/rand" "$M/u"
not_listed() { ! ls "$M" | grep -qx u; }
unlinked_keys() { rcli --scan --pattern "tensorfs:unlinked:${1:-}*" | wc -l; }
record_moved() { [ "$(rcli exists tensorfs:tensor:u)" = 0 ] && [ "$(unlinked_keys n1:)" = 1 ]; }
unlinked_refcount_1() { [ "$(rcli hget "$(rcli --scan --pattern 'tensorfs:unlinked:n1:*')" refcount)" = 1 ]; }
reads_through_fd() { cmp "$T/rand" - <&5; }
name_reused() { touch "$M/u" && [ "$(size_of "$M/u")" = 0 ]; }
exec 5<"$M/u"
check "rm of an open tensor" rm "$M/u"
check "name gone at once" test ! -e "$M/u"
check "name not in listing" not_listed
check "record moved off the name" record_moved
check "unlinked record refcount 1" unlinked_refcount_1
check "bytes still readable through the fd" reads_through_fd
check "the name can be reused at once" name_reused
exec 5<&-
soon test "$(unlinked_keys)" = 0
eq "last close frees the record" 0 "$(unlinked_keys)"
finish
