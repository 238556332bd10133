# A queue nobody serves: the library gives up after TFS_TIMEOUT_MS with ETIMEDOUT and a
# message that says so, rather than waiting forever.
. "$(dirname "$0")/../lib.sh"
client_mount
check_err "a queue nobody serves: ETIMEDOUT, clear message" "no reply on .* within 500 ms" \
	env TFS_QUEUE=nobody_serves TFS_TIMEOUT_MS=500 "$TOOL" qget "$URL" q1
finish
