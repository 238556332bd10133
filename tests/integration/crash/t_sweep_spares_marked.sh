# The start-up sweep of dead keepers' directories (fs/mem/shm_sweep.c) spares one that a
# live keeper marked as taken over (".keeper.<pid>", fs/mem/keeper/handover.h): its
# objects are that keeper's now, under their old names. A mark of a dead pid protects
# nothing.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
sh -c 'exit 0' & dead=$!; wait $dead
sh -c 'exit 0' & dead2=$!; wait $dead2
sleep 600 & live=$!
kept=/dev/shm/tensorfs.$dead.0badf00d
gone=/dev/shm/tensorfs.$dead2.0badf00d
mkdir -m 711 "$kept" "$gone"
head -c 4096 /dev/urandom > "$kept/0123456789abcdef01234567"
touch "$kept/.keeper.$live"
head -c 4096 /dev/zero > "$gone/0123456789abcdef01234567"
touch "$gone/.keeper.$dead"
mount_tfs "$M" --node n1 --backend host || exit 1
check "a directory marked by a dead pid is swept" soon test ! -e "$gone"
check "one marked by a live keeper is not" test -f "$kept/0123456789abcdef01234567"
kill "$live"; wait "$live" 2>/dev/null
rm -rf "$kept"
finish
