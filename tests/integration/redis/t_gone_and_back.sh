# Redis gone mid-run: metadata calls fail with EIO while the mount stays up and open
# tensors still read; Redis back (empty): the node's records, with their open references,
# are written again and everything works.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
redis_password s3cret
M=$T/m
mount_tfs "$M" --node n1 || exit 1
echo data > "$M/a"
reads_fd3() { [ "$(cat <&3)" = data ]; }
listed() { ls "$M" | grep -qx a; }
new_works() { echo more > "$M/new" && [ "$(cat "$M/new")" = more ]; }
exec 3<"$M/a"
rcli shutdown nosave >/dev/null 2>&1
wait "$REDIS_PID" 2>/dev/null; REDIS_PID=
check_err "Redis gone: metadata calls fail with EIO" "Input/output error" touch "$M/new"
check "Redis gone: the mount stays up" mountpoint -q "$M"
check "Redis gone: an open tensor still reads" reads_fd3
check "Redis gone: logged" grep -q "Redis unreachable" "$T/m.log"
start_redis || exit 1
redis-cli -s "$SOCK" config set requirepass s3cret >/dev/null   # a fresh server: no password yet
for _ in $(seq 200); do [ "$(rcli exists tensorfs:tensor:a)" = 1 ] && break; sleep 0.1; done
eq "Redis back (empty): the node's records are rewritten" 1 "$(rcli exists tensorfs:tensor:a)"
eq "rewritten refcount counts the open fd" 2 "$(rcli hget tensorfs:tensor:a refcount)"
check "Redis back: the tensor is listed" listed
check "Redis back: new tensors work" new_works
check "recovery was logged" grep -q "Redis is back" "$T/m.log"
exec 3<&-
finish
