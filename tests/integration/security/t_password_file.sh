# --redis-password-file (issue 32, item 4): a file that its group or others may read, or
# that belongs to another user, is refused with a clear message; a 0600 file logs in, as
# --redis-password-file FILE and as -o redis_password_file=FILE; a restarted daemon gets
# the password from its keeper (not from the file again, nor from argv); the private
# redis-server asks for the password, which is not in its command line either.
. "$(dirname "$0")/../lib.sh"
export EXPECT_RESTARTS=1
PW=Zq8pw-file-4711
start_redis || exit 1
redis_password "$PW"
URL="unix://$SOCK"             # the password comes from the file
chmod 755 "$T"
mkdir -p "$T/x"
printf '%s\n' "$PW" > "$T/pw"
chmod 640 "$T/pw"
check_err "a group-readable password file is refused" "password file $T/pw is open to its group (mode 0640): chmod 600 it" \
	timeout 60 "$TFS" -f --redis "$URL" --redis-password-file "$T/pw" "$T/x"
chmod 604 "$T/pw"
check_err "a world-readable password file is refused" "open to others (mode 0604)" \
	timeout 60 "$TFS" -f --redis "$URL" --redis-password-file="$T/pw" "$T/x"
chmod 600 "$T/pw"
chown 65534 "$T/pw"
check_err "a password file of another user is refused" "belongs to uid 65534, not to the daemon's user" \
	timeout 60 "$TFS" -f --redis "$URL" -o redis_password_file="$T/pw" "$T/x"
chown 0 "$T/pw"
check_err "a missing password file: clear error" "cannot open the password file $T/none" \
	timeout 60 "$TFS" -f --redis "$URL" --redis-password-file "$T/none" "$T/x"
: > "$T/empty"; chmod 600 "$T/empty"
check_err "an empty password file is refused" "must hold one line" \
	timeout 60 "$TFS" -f --redis "$URL" --redis-password-file "$T/empty" "$T/x"
check_err "a password given two ways is refused" "more than one way" \
	timeout 60 "$TFS" -f --redis "unix://:$PW@$SOCK" --redis-password-file "$T/pw" "$T/x"
printf 'wrong\n' > "$T/wrong"; chmod 600 "$T/wrong"
check_err "a wrong password in the file: Redis refuses it" "refused the password" \
	timeout 60 "$TFS" -f --redis "$URL" --redis-password-file "$T/wrong" "$T/x"
check "nothing mounted by the refused starts" not mountpoint -q "$T/x"

M=$T/m
mount_tfs "$M" --node n1 --redis-password-file "$T/pw" || exit 1
check "a 0600 password file logs in: the mount serves" sh -c "echo x > '$M/a'"
eq "its record reached Redis" 1 "$(rcli exists tensorfs:tensor:a)"
M2=$T/m2
mount_tfs "$M2" --node n2 --prefix p2 -o "redis_password_file=$T/pw" || exit 1
check "-o redis_password_file=FILE logs in too" sh -c "echo x > '$M2/a'"
# The restarted daemon must not read the file again: one that is now refused (or gone)
# does not stop it.
chmod 644 "$T/pw"
check "kill -9 of the daemon: the keeper starts it again" kill9_and_serve "$M"
check "the restarted daemon logs in with the password the keeper passed" sh -c "echo y > '$M/b'"
eq "its record reached Redis" 1 "$(rcli exists tensorfs:tensor:b)"
for p in "${MNT_PID[$M]}" "$(daemon_pid "$M")"; do
	if $NOBODY cat "/proc/$p/cmdline" | tr '\0' ' ' | grep -qF -- "$PW"; then
		nok "pid $p's command line shows the password"
	else
		ok "pid $p's command line shows no password"
	fi
done
chmod 600 "$T/pw"

# The private redis-server (no --redis): it asks for the password, given on its stdin.
P=$T/priv
mkdir -p "$P"
"$TFS" -f --log "$T/priv.log" --backend host --redis-password-file "$T/pw" "$P" &
MNT_PID[$P]=$!
for _ in $(seq 400); do mountpoint -q "$P" && break; sleep 0.05; done
check "mounted with a private redis-server that asks for the password" mountpoint -q "$P"
line=$(grep -o "private redis-server (pid [0-9]*) at [^ ]*" "$T/priv.log" | head -1)
rpid=$(echo "$line" | sed 's/.*pid \([0-9]*\).*/\1/')
rsock=${line##* at }
check "the private mount serves" sh -c "echo x > '$P/a'"
check "its redis-server refuses a client without the password" sh -c "redis-cli -s '$rsock' ping 2>&1 | grep -q NOAUTH"
check "and answers one with it" sh -c "redis-cli --no-auth-warning -s '$rsock' -a '$PW' exists tensorfs:tensor:a | grep -qx 1"
if [ -n "$rpid" ] && ! tr '\0' ' ' < "/proc/$rpid/cmdline" | grep -qF -- "$PW"; then
	ok "the redis-server's command line shows no password"
else
	nok "the redis-server's command line shows the password (pid '$rpid')"
fi
check "kill -9 of its daemon: the restarted one finds its redis-server again" kill9_and_serve "$P"
check "and logs in to it" sh -c "echo y > '$P/b' && [ \"\$(cat '$P/a')\" = x ]"
kill -9 "$rpid"
ok=
for _ in $(seq 400); do
	line=$(grep -o "private redis-server back (pid [0-9]*)" "$T/priv.log" | tail -1)
	[ -n "$line" ] && { ok=1; break; }
	sleep 0.05
done
check "a private redis-server that died comes back" test -n "$ok"
rpid=$(echo "$line" | sed 's/.*pid \([0-9]*\).*/\1/')
check "with the password" sh -c "redis-cli -s '$rsock' ping 2>&1 | grep -q NOAUTH && redis-cli --no-auth-warning -s '$rsock' -a '$PW' exists tensorfs:tensor:b | grep -qx 1"
check "the mount serves through it" soon sh -c "echo z > '$P/c'"
check "no password in the private mount's log" not grep -qF -- "$PW" "$T/priv.log"
finish
