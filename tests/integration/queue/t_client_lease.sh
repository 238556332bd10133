# The library's leased holds (issue 15, item 3): a client the daemon cannot see (here: it
# names another node, as a container or another machine does) needs a lease, renews it
# with tfs_renew while it holds, and its hold goes when it stops renewing (killed).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
tool() { env TFS_NODE=elsewhere "$HELPERS/tfs_client_tool" "$@"; }
touch "$M/t"
check_err "without a lease: refused" "ESRCH" tool qget "$URL" t
eq "no hold taken" 1 "$(xget "$M/t" refcount)"
# (not through the function: $! must be the client itself)
TFS_NODE=elsewhere TFS_LEASE=5 "$HELPERS/tfs_client_tool" qget "$URL" t 30 > "$T/out" 2>&1 & cpid=$!
for _ in $(seq 200); do [ "$(xget "$M/t" refcount)" = 2 ] && break; sleep 0.1; done
eq "with a lease: held" 2 "$(xget "$M/t" refcount)"
# Renewed every second: a lease of 5 s holds while a loaded machine delays a renewal.
sleep 6.5
eq "renewed: still held after the lease's 5 s" 2 "$(xget "$M/t" refcount)"
check "the client is still holding, with no error" sh -c "kill -0 $cpid && ! grep -qi error $T/out"
kill -9 $cpid; wait $cpid 2>/dev/null
for _ in $(seq 200); do [ "$(xget "$M/t" refcount)" = 1 ] && break; sleep 0.1; done
eq "killed: the hold goes when its lease runs out" 1 "$(xget "$M/t" refcount)"
finish
