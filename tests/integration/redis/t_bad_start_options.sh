# A start that cannot work says why and mounts nothing: Redis down, a bad URL, no
# redis-server to start, bad --max-bytes, an unknown backend, --threads 0.
. "$(dirname "$0")/../lib.sh"
mkdir -p "$T/x"
check_err "Redis down at start: clear error" "cannot connect to Redis" "$TFS" -f --redis "unix://$T/none.sock" "$T/x"
check "Redis down at start: nothing mounted" not mountpoint -q "$T/x"
check_err "bad URL: clear error" "bad --redis URL" "$TFS" -f --redis "http://nope" "$T/x"
check_err "no redis-server and no URL: names the package" "install the Debian package 'redis-server'" env PATH=/nonexistent "$TFS" -f "$T/x"
check_err "bad --max-bytes: clear error" "max-bytes" "$TFS" -f --max-bytes 12Q "$T/x"
check_err "unknown backend: clear error" "unknown or unavailable backend" "$TFS" -f --backend tpu "$T/x"
check_err "--threads 0: clear error" "threads must be between 1 and 1024" "$TFS" -f --threads 0 "$T/x"
finish
