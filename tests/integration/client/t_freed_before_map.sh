# Metadata read, then the tensor removed before the map: nothing holds the memory, and
# the map is ESTALE.
. "$(dirname "$0")/../lib.sh"
client_mount
printf 'bye' > "$M/v"
getfattr --absolute-names --only-values -n user.tensor.meta "$M/v" > "$T/v.json"
rm "$M/v"
check_err "a tensor freed between reading its metadata and mapping: ESTALE" "error: ESTALE" \
	"$TOOL" open-meta "$T/v.json"
finish
