# Redis trouble: missing at start, a refused password, gone mid-run and back again.
. "$(dirname "$0")/lib.sh"
cd "$T"
mkdir -p "$T/x"
check_err "Redis down at start: clear error" "cannot connect to Redis" "$TFS" -f --redis "unix://$T/none.sock" "$T/x"
check "Redis down at start: nothing mounted" bash -c "! mountpoint -q '$T/x'"
check_err "bad URL: clear error" "bad --redis URL" "$TFS" -f --redis "http://nope" "$T/x"
check_err "no redis-server and no URL: names the package" "install the Debian package 'redis-server'" env PATH=/nonexistent "$TFS" -f "$T/x"
check_err "bad --max-bytes: clear error" "max-bytes" "$TFS" -f --max-bytes 12Q "$T/x"
check_err "unknown backend: clear error" "unknown or unavailable backend" "$TFS" -f --backend tpu "$T/x"
check_err "--threads 0: clear error" "threads must be between 1 and 1024" "$TFS" -f --threads 0 "$T/x"

start_redis || exit 1
rcli config set requirepass s3cret >/dev/null
check_err "refused password: clear error" "refused the password" "$TFS" -f --redis "unix://:wrong@$SOCK" "$T/x"
check_err "missing password: clear error" "NOAUTH" "$TFS" -f --redis "$URL" "$T/x"
URL="unix://:s3cret@$SOCK"
M=$T/m
mount_tfs "$M" --node n1 || exit 1
rcli() { redis-cli -s "$SOCK" -a s3cret --no-auth-warning "$@"; }
check "works with the password" bash -c "echo data > '$M/a'"

exec 3<"$M/a"
redis-cli -s "$SOCK" -a s3cret --no-auth-warning shutdown nosave >/dev/null 2>&1
wait "$REDIS_PID" 2>/dev/null; REDIS_PID=
check_err "Redis gone: metadata calls fail with EIO" "Input/output error" touch "$M/new"
check "Redis gone: the mount stays up" mountpoint -q "$M"
check "Redis gone: an open tensor still reads" bash -c "[ \"\$(cat <&3)\" = data ]"
check "Redis gone: logged" grep -q "Redis unreachable" "$T/m.log"
start_redis || exit 1
redis-cli -s "$SOCK" config set requirepass s3cret >/dev/null   # a fresh server: no password yet
for _ in $(seq 50); do [ "$(rcli exists tensorfs:tensor:a)" = 1 ] && break; sleep 0.1; done
eq "Redis back (empty): the node's records are rewritten" 1 "$(rcli exists tensorfs:tensor:a)"
eq "rewritten refcount counts the open fd" 2 "$(rcli hget tensorfs:tensor:a refcount)"
check "Redis back: the tensor is listed" bash -c "ls '$M' | grep -qx a"
check "Redis back: new tensors work" bash -c "echo more > '$M/new' && [ \"\$(cat '$M/new')\" = more ]"
check "recovery was logged" grep -q "Redis is back" "$T/m.log"
exec 3<&-
cd /
finish
