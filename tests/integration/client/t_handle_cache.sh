# The per-process cache: one mapping per handle however often it is opened, none after
# the last close. Small tensors of one directory share a handle (packed into one block on
# either backend, docs/handles.md); one of another directory has its own.
. "$(dirname "$0")/../lib.sh"
client_mount
f32_23 "$M/a"
printf 'xyz' > "$M/b"
mkdir "$M/d"
printf 'xyz' > "$M/d/c"
eq "one mapping per handle, two handles, none after close" "2 0" "$(out "$TOOL" cache "$M/a" "$M/a" "$M/b" "$M/d/c" | head -2 | xargs)"
finish
