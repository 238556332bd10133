# Two holders (fs/mem/keeper/handover.h) when the dead keeper's directory is removed from
# /dev/shm after all (by hand, or by the start-up sweep of a tensorfs that knows no
# marks): the memory lives in the descriptors the daemon and the new keeper hold, so a
# further SIGKILL of the keeper, then of the daemon, loses no tensor's bytes through the
# mount; mapping by the old name is over, and libtensorfs's tfs_open maps the memory
# through the handle socket instead (lib/handle_socket.c), as another uid may only where
# the mount lets it read.
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/holders.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --backend host || exit 1
holders_setup "$M"
dir=/dev/shm/$(xget "$M/t0" ipc_handle | tail -c +9 | tr -d '\0' | cut -d/ -f2)
check "keeper 1 replaced" kill_keeper "$M"
rm -rf "$dir"
check "keeper 2 replaced after its directory went" kill_keeper "$M"
check "and says what it kept" grep -q "is gone from /dev/shm: kept by its descriptor" "$T/m.log"
check "the daemon starts again" kill_daemon "$M"
same=0
for f in "${NAMES[@]}"; do
	[ "$(holders_snap "$M" "$f" | cut -d' ' -f1-5)" = "$(echo "${BEFORE[$f]}" | cut -d' ' -f1-5)" ] && same=$((same + 1))
done
eq "every tensor has its bytes, inode, size, mode and owner through the mount" "${#NAMES[@]}" "$same"
eq "the queue hold still counts" 2 "$(xget "$M/a/t4" refcount)"
check "the name is gone" test ! -e "$dir"
client_tools
hexsum() { od -An -v -tx1 | tr -d ' \n' | md5sum; }
eq "tfs_open of a new process maps a/t1 through the handle socket" \
	"$(hexsum < "$M/a/t1")" "$("$TOOL" read "$M/a/t1" 0 "$(stat -c %s "$M/a/t1")" | head -1 | tr -d '\n' | md5sum)"
eq "and t0" "$(hexsum < "$M/t0")" "$("$TOOL" read "$M/t0" 0 4096 | head -1 | tr -d '\n' | md5sum)"
holders_end "$M"
finish
