# The library's queue client uses the per-user queue when it logs in with a user's
# credentials (issue 15, item 2): tfs_create/tfs_get/tfs_delete as uid 65534 act with its
# permissions, and its tensors are its own.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../perm/quser_lib.sh"
start_redis || exit 1
M=$T/m
quser_mount "$M" --node n1 || exit 1
mkdir "$M/pub"; chmod 777 "$M/pub"
tool() { as_user env TFS_NODE=n1 "$HELPERS/tfs_client_tool" "$@"; }
check "create in a directory the user may write" tool qcreate "$QURL" pub/x f32 '[4]'
eq "the tensor is the user's" "$QUID 16" "$(stat -c '%u %s' "$M/pub/x")"
check_err "create in root's directory: refused" "EACCES" tool qcreate "$QURL" y f32 '[4]'
check "nothing made there" test ! -e "$M/y"
check "get, read and delete its own" tool qgetdel "$QURL" pub/x
check "the get's hold went with the delete" test -e "$M/pub/x"
eq "refcount back to 1" 1 "$(xget "$M/pub/x" refcount)"
touch "$M/rootfile"; chmod 600 "$M/rootfile"
check_err "get of root's 0600 tensor: refused" "EACCES" tool qget "$QURL" rootfile
eq "nothing was sent on the shared queue" 0 "$(rcli llen tensor_lifecycle)"
finish
