# A handle from a dead daemon: the metadata of a live one maps, and once that daemon is
# gone the same metadata is ESTALE with a clear message, not a crash.
. "$(dirname "$0")/../lib.sh"
client_tools
start_redis || exit 1
D=$T/d
mount_tfs "$D" --node n9 --prefix dead --queue dead_q --backend host || exit 1
printf 'gone' > "$D/g"
getfattr --absolute-names --only-values -n user.tensor.meta "$D/g" > "$T/g.json"
eq "metadata of a live daemon maps" "u8 [4] 4 host rw" "$(out "$TOOL" open-meta "$T/g.json" | head -1)"
umount_tfs "$D"
check_err "a handle from a dead daemon: ESTALE" "error: ESTALE: .*no longer exists" \
	"$TOOL" open-meta "$T/g.json"
finish
