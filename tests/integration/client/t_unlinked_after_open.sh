# A tensor unlinked between open and map: the descriptor keeps it alive for the map and
# the copies, and its record goes with the close.
. "$(dirname "$0")/../lib.sh"
client_mount
printf 'hello' > "$M/u"
eq "unlinked after open still maps and copies" "u8 [5] 5 host rw 2a" \
	"$(out "$TOOL" unlinked "$M/u" | head -2 | xargs)"
check "the unlinked tensor left the directory" test ! -e "$M/u"
for _ in $(seq 400); do [ "$(rcli exists tensorfs:tensor:u)" = 0 ] && break; sleep 0.05; done
eq "its record is gone after the close" 0 "$(rcli exists tensorfs:tensor:u)"
finish
