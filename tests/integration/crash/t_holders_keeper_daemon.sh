# Two holders (fs/mem/keeper/handover.h): SIGKILL of the keeper, then of the daemon. The
# daemon starts a new keeper and hands it every object's descriptor; the new keeper starts
# the daemon again when it dies, which adopts every tensor: bytes, name, metadata, holds.
# A sweep at the new daemon's start must not remove the dead keeper's directory, whose
# objects the new keeper holds (its mark, shm_sweep.h).
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/holders.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --backend host || exit 1
holders_setup "$M"
k=$(keeper_of "$M")
check "the keeper kept by the daemon is replaced after its SIGKILL" kill_keeper "$M"
check "the first keeper is gone" bash -c "! kill -0 $k 2>/dev/null"
holders_check "$M" "keeper killed"
check "the daemon starts again after its SIGKILL, from the new keeper" kill_daemon "$M"
holders_check "$M" "keeper then daemon killed"
holders_end "$M"
finish
