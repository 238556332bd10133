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
# Each made under a name no sweep looks at (not tensorfs.<pid>.*), then renamed into place
# whole: any other test's daemon starting meanwhile sweeps dead pids' directories, and
# would take one between its mkdir and its mark.
sk=/dev/shm/tfs-test-stage.$$.kept sg=/dev/shm/tfs-test-stage.$$.gone
mkdir -m 711 "$sk" "$sg"
head -c 4096 /dev/urandom > "$sk/0123456789abcdef01234567"
touch "$sk/.keeper.$live"
head -c 4096 /dev/zero > "$sg/0123456789abcdef01234567"
touch "$sg/.keeper.$dead"
mv -T "$sk" "$kept"
mv -T "$sg" "$gone"
mount_tfs "$M" --node n1 --backend host || exit 1
check "a directory marked by a dead pid is swept" soon test ! -e "$gone"
check "one marked by a live keeper is not" test -f "$kept/0123456789abcdef01234567"
kill "$live"; wait "$live" 2>/dev/null
rm -rf "$kept"
finish
