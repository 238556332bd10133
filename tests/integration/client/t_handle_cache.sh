# The per-process cache: one mapping per handle however often it is opened, none after
# the last close.
. "$(dirname "$0")/../lib.sh"
client_mount
f32_23 "$M/a"
printf 'xyz' > "$M/b"
eq "one mapping per handle, two handles, none after close" "2 0" "$(out "$TOOL" cache "$M/a" "$M/a" "$M/b" | head -2 | xargs)"
finish
