# Two holders (fs/mem/keeper/handover.h): SIGKILL of the daemon, then, once the keeper
# started it again, of the keeper. The restarted daemon keeps a descriptor of every object
# it adopted (the keeper's LIST), so it hands them to the keeper it starts; a third SIGKILL,
# of the daemon again, shows that the new keeper holds them and restarts it.
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/holders.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --backend host || exit 1
holders_setup "$M"
check "the daemon starts again after its SIGKILL" kill_daemon "$M"
holders_check "$M" "daemon killed"
check "the keeper is replaced after its SIGKILL" kill_keeper "$M"
holders_check "$M" "daemon then keeper killed"
check "the daemon starts again from the new keeper" kill_daemon "$M"
holders_check "$M" "daemon, keeper, daemon killed"
holders_end "$M"
finish
