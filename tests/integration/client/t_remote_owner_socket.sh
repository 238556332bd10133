# libtensorfs on another node's tensor of this machine whose memory has no name to map by
# (its shared-memory object's name removed, as a sweep would; the memory lives in its
# daemon and keeper): the mount it was opened on has none of it to hand out, so the
# library asks the owner's handle socket, found through the owner's mount
# (lib/handle_socket.c tfs_hsock_fetch_owner); --memory vmm tensors, whose memory comes
# only that way, map another node's tensor so (names/t_fd_share, net/t_lib_remote).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
client_tools
A=$T/a
B=$T/b
mount_tfs "$A" --node n1 --backend host || exit 1
mount_tfs "$B" --node n2 --backend host || exit 1
printf 'ABCDEFGH' > "$A/x"
for _ in $(seq 400); do [ "$(stat -c %s "$B/x" 2>/dev/null)" = 8 ] && break; sleep 0.05; done
obj=/dev/shm$(xget "$A/x" ipc_handle | tail -c +9 | tr -d '\0')
check "n1's tensor has a shared-memory object" test -f "$obj"
rm -f "$obj"
eq "its name gone, n1's tensor maps into n2's client from n1's socket" \
	"info.data set, mapped 1|data set|done" "$(out "$TOOL" data "$B/x" | paste -sd'|')"
eq "  tfs_read gives n1's bytes" 4142434445464748 "$(out "$TOOL" read "$B/x" 0 8 | head -1)"
check "  tfs_write" "$TOOL" write "$B/x" 0 7979
eq "  it lands in n1's memory" yyCDEFGH "$(cat "$A/x")"
finish
