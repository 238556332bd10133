# Over io_uring, where the daemon also copies read replies out of the tensor's memory: the
# owner of a host tensor shrinks its memory object; the daemon lives and every other
# tensor keeps its bytes (issue 32, item 1; owner_truncates_lib.sh).
# tfs-test: alone (it sets the fuse module's enable_uring, which every mount of the machine shares)
. "$(dirname "$0")/../lib.sh"
enable_uring Y
other_uid_mount --backend host -o io_uring
# The rings start once the kernel's INIT is answered, a moment after the mount appears.
rings() { for _ in $(seq 400); do grep -q "io_uring: serving over [0-9]* queues" "$T/m.log" && return 0; sleep 0.05; done; return 1; }
check "the daemon serves over the rings" rings
. "$ROOT/tests/integration/perm/owner_truncates_lib.sh"
