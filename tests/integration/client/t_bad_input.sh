# Bad input to tfs_open: a file outside a mount, malformed metadata (on a file or in
# JSON), a directory; an empty tensor opens with no memory.
. "$(dirname "$0")/../lib.sh"
client_mount
echo data > "$T/plain"
check_err "a path outside a tensorfs mount: ENOTSUP" "error: E[A-Z]*NOTSUPP*: .*not on a tensorfs mount" \
	"$TOOL" info "$T/plain"
if setfattr -n user.tensor.meta -v '{"dtype":"f32",' "$T/plain" 2>/dev/null; then
	check_err "malformed user.tensor.meta: EBADMSG" "error: EBADMSG" "$TOOL" info "$T/plain"
else
	echo "skip - malformed meta on a file: $T does not take user xattrs"
fi
echo '{"dtype":"f32","shape_text":"[2]"' > "$T/bad.json"
check_err "malformed metadata JSON: EBADMSG" "error: EBADMSG" "$TOOL" open-meta "$T/bad.json"
check_err "a directory: EISDIR" "error: EISDIR" "$TOOL" info "$M"
touch "$M/empty"
eq "an empty tensor opens with no memory" "u8 [0] 0 host ro" "$(out "$TOOL" info "$M/empty" | head -1)"
finish
