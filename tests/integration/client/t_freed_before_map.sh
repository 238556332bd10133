# Metadata read, then the tensor removed before the map: once nothing holds the memory,
# the map is ESTALE. A packed tensor's handle names its block (docs/handles.md), which the
# host backend gives back a second or two after the last tensor in it (its name then
# goes), as the cuda pool keeps a block's handle valid while the block lives: tfs_open_meta
# leaves keeping the tensor alive to its caller.
. "$(dirname "$0")/../lib.sh"
client_mount
printf 'bye' > "$M/v"
getfattr --absolute-names --only-values -n user.tensor.meta "$M/v" > "$T/v.json"
[ "$BACKEND" = host ] && obj=$(shm_of "$M/v")
rm "$M/v"
[ "$BACKEND" = host ] && soon test ! -e "$obj"
check_err "a tensor freed between reading its metadata and mapping: ESTALE" "error: ESTALE" \
	"$TOOL" open-meta "$T/v.json"
finish
