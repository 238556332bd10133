# Over /dev/fuse: the owner of a host tensor shrinks its memory object; the daemon lives
# and every other tensor keeps its bytes (issue 32, item 1; owner_truncates_lib.sh).
. "$(dirname "$0")/../lib.sh"
other_uid_mount --backend host
. "$ROOT/tests/integration/perm/owner_truncates_lib.sh"
