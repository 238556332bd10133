# A Redis that asks for a password: a wrong or missing one is a clear error at start, the
# right one mounts.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
mkdir -p "$T/x"
redis_password s3cret
write_a() { echo data > "$M/a"; }
check_err "refused password: clear error" "refused the password" "$TFS" -f --redis "unix://:wrong@$SOCK" "$T/x"
check_err "missing password: clear error" "NOAUTH" "$TFS" -f --redis "unix://$SOCK" "$T/x"
M=$T/m
mount_tfs "$M" --node n1 || exit 1
check "works with the password" write_a
finish
