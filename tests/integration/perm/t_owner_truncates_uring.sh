# Over io_uring, where the daemon also copies read replies out of the tensor's memory: the
# owner of a host tensor shrinks its memory object; the daemon lives and every other
# tensor keeps its bytes (issue 32, item 1; owner_truncates_lib.sh).
. "$(dirname "$0")/../lib.sh"
enable_uring Y
other_uid_mount --backend host -o io_uring
check "the daemon serves over the rings" grep -q "io_uring: serving over [0-9]* queues" "$T/m.log"
. "$ROOT/tests/integration/perm/owner_truncates_lib.sh"
