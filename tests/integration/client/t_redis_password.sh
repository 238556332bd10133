# The library's Redis connection: a refused password is EACCES with a clear message, the
# right one connects, no Redis at all is ENOENT.
. "$(dirname "$0")/../lib.sh"
client_tools
PW=$T/pw.sock
redis-server --port 0 --unixsocket "$PW" --requirepass s3cret --save "" --appendonly no \
	--dir "$T" --daemonize no >/dev/null 2>&1 3<&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&- &
pwpid=$!
for _ in $(seq 400); do [ -S "$PW" ] && break; sleep 0.05; done
check_err "Redis refuses the password: EACCES" "error: EACCES: Redis refused the password" \
	"$TOOL" qconnect "unix://:wrong@$PW" x
check "the right password connects" "$TOOL" qconnect "unix://:s3cret@$PW" x
kill $pwpid; wait $pwpid 2>/dev/null
check_err "no Redis there: ENOENT" "error: ENOENT" "$TOOL" qconnect "unix://$T/none.sock" x
finish
