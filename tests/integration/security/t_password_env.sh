# TENSORFS_REDIS_PASSWORD (issue 32, item 4): the daemon logs in with it and takes it out of
# its environment (the keeper's and the daemon's /proc/PID/environ, and what a restarted
# daemon inherits, hold it no more); the client library takes it for a URL without a
# password.
. "$(dirname "$0")/../lib.sh"
export EXPECT_RESTARTS=1
PW=Zq8pw-env-4711
start_redis || exit 1
redis_password "$PW"
URL="unix://$SOCK"
mkdir -p "$T/x"
check_err "an empty TENSORFS_REDIS_PASSWORD is refused" "TENSORFS_REDIS_PASSWORD must hold 1 to 255 bytes" \
	timeout 60 env TENSORFS_REDIS_PASSWORD= "$TFS" -f --redis "$URL" "$T/x"
check_err "given both in the environment and in the URL: refused" "more than one way" \
	timeout 60 env TENSORFS_REDIS_PASSWORD="$PW" "$TFS" -f --redis "unix://:$PW@$SOCK" "$T/x"
check_err "a wrong one: Redis refuses it" "refused the password" \
	timeout 60 env TENSORFS_REDIS_PASSWORD=wrong "$TFS" -f --redis "$URL" "$T/x"
M=$T/m
TENSORFS_REDIS_PASSWORD=$PW mount_tfs "$M" || exit 1
check "the daemon logs in with TENSORFS_REDIS_PASSWORD" sh -c "echo x > '$M/a'"
eq "its record reached Redis" 1 "$(rcli exists tensorfs:tensor:a)"
# in_environ DESC PID: the process's environment (read as root) holds no password
no_pw() {
	if tr '\0' '\n' < "/proc/$2/environ" | grep -qF -- "$PW"; then
		nok "$1: the password is in /proc/$2/environ"
	else
		ok "$1: no password in its environment"
	fi
}
no_pw "the keeper" "${MNT_PID[$M]}"
no_pw "the daemon" "$(daemon_pid "$M")"
check "kill -9 of the daemon: the keeper starts it again" kill9_and_serve "$M"
check "the restarted daemon logs in" sh -c "echo y > '$M/b'"
eq "its record reached Redis" 1 "$(rcli exists tensorfs:tensor:b)"
no_pw "the restarted daemon" "$(daemon_pid "$M")"
check "no password in the log" not grep -qF -- "$PW" "$T/m.log"

client_tools
check_err "the library without a password: refused" "EACCES" "$TOOL" qconnect "$URL" x
check "the library takes TENSORFS_REDIS_PASSWORD for a URL without one" \
	env TENSORFS_REDIS_PASSWORD="$PW" "$TOOL" qconnect "$URL" x
check_err "a password in the URL wins over it" "EACCES" \
	env TENSORFS_REDIS_PASSWORD="$PW" "$TOOL" qconnect "unix://:wrong@$SOCK" x
finish
