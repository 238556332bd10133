# A start that fails before it mounts leaves the node's records alone: before, the sweep
# of this node's stale records ran first (issue 15, item 14).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
rcli hset tensorfs:tensor:kept node n1 bytes 0 dtype u8 shape '[0]' >/dev/null
rcli hset tensorfs:dirents: kept t >/dev/null
check_err "a start with an option libfuse refuses fails" "unknown option" "$TFS" -f \
	--redis "$URL" --node n1 --log /dev/stderr -o no_such_fuse_option "$T"
eq "the node's record is still there" 1 "$(rcli exists tensorfs:tensor:kept)"
eq "and its entry" t "$(rcli hget tensorfs:dirents: kept)"
M=$T/m
mount_tfs "$M" --node n1 || exit 1
eq "a start that mounts removes it (its memory is gone)" 0 "$(rcli exists tensorfs:tensor:kept)"
finish
