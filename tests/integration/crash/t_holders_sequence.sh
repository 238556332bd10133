# Two holders (fs/mem/keeper/handover.h), each killed in turn with the restart between:
# keeper, daemon, keeper, daemon. Every tensor comes back each time, and a tensor written
# between the kills (in the second keeper's directory) too.
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/holders.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --backend host || exit 1
holders_setup "$M"
check "keeper 1 replaced" kill_keeper "$M"
head -c 300000 /dev/urandom > "$M/late"
NAMES+=(late); BEFORE[late]=$(holders_snap "$M" late)
check "daemon 1 restarted" kill_daemon "$M"
holders_check "$M" "after keeper, daemon"
check "keeper 2 replaced" kill_keeper "$M"
holders_check "$M" "after keeper, daemon, keeper"
check "daemon 2 restarted" kill_daemon "$M"
holders_check "$M" "after keeper, daemon, keeper, daemon"
rm "$M/late"
holders_end "$M"
finish
