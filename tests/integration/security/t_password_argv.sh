# A Redis password given inline in the --redis URL (issue 32, item 4): no other local user
# reads it, in the command lines of the memory keeper and the daemon (before and after the
# keeper starts the daemon again), in the log file or in the log lines; the restarted
# daemon still logs in (the keeper passes the password on a pipe, not in argv).
. "$(dirname "$0")/../lib.sh"
export EXPECT_RESTARTS=1
PW=Zq8pw-inline-4711
start_redis || exit 1
redis_password "$PW"
chmod 755 "$T"
M=$T/m
mount_tfs "$M" --allow-other || exit 1
keeper=${MNT_PID[$M]}
daemon=$(daemon_pid "$M")
# hidden DESC FILE: uid 65534 reads FILE and finds no password in it
hidden() {
	local d=$1 f=$2 got
	got=$($NOBODY cat "$f" 2>/dev/null | tr '\0' ' ')
	if [[ "$got" == *"$PW"* ]]; then nok "$d: uid 65534 reads the password"; else ok "$d"; fi
}
# as root: FILE holds no password
clean() { if tr '\0' ' ' < "$2" | grep -qF -- "$PW"; then nok "$1: the password is there"; else ok "$1"; fi; }
check "uid 65534 can read the keeper's command line" $NOBODY sh -c "grep -q tensorfs /proc/$keeper/cmdline"
hidden "keeper's /proc/PID/cmdline" "/proc/$keeper/cmdline"
hidden "daemon's /proc/PID/cmdline" "/proc/$daemon/cmdline"
check "the keeper's command line still names the socket" grep -qF "$SOCK" "/proc/$keeper/cmdline"
clean "keeper's environment (read as root)" "/proc/$keeper/environ"
clean "daemon's environment (read as root)" "/proc/$daemon/environ"
echo x > "$M/a"
eq "the log file is 0600" 600 "$(stat -c %a "$T/m.log")"
hidden "the log file" "$T/m.log"
clean "the log lines (read as root)" "$T/m.log"
check "the mounted line shows the URL redacted" grep -qF "unix://:***@$SOCK" "$T/m.log"
check "the log warns of the inline password" grep -q "password was given in the --redis URL" "$T/m.log"

check "kill -9 of the daemon: the keeper starts it again" kill9_and_serve "$M"
daemon2=$(daemon_pid "$M")
check "the restarted daemon logs in to Redis and serves" sh -c "echo y > '$M/b' && [ \"\$(cat '$M/a')\" = x ]"
eq "its record reached Redis" 1 "$(rcli exists tensorfs:tensor:b)"
hidden "restarted daemon's /proc/PID/cmdline" "/proc/$daemon2/cmdline"
hidden "keeper's /proc/PID/cmdline after the restart" "/proc/$keeper/cmdline"
clean "restarted daemon's environment (read as root)" "/proc/$daemon2/environ"
clean "the log after the restart (read as root)" "$T/m.log"

# -o redis=URL (an /etc/fstab line's form, which mount.fuse3 passes on): scrubbed too.
M4=$T/m4
mkdir -p "$M4"
"$TFS" -f -o "allow_other,redis=unix://:$PW@$SOCK,node=n4,prefix=p4" --log "$T/m4.log" "$M4" &
MNT_PID[$M4]=$!
for _ in $(seq 400); do mountpoint -q "$M4" && break; sleep 0.05; done
check "-o redis=URL mounts" sh -c "echo x > '$M4/a'"
hidden "-o redis=URL: keeper's /proc/PID/cmdline" "/proc/${MNT_PID[$M4]}/cmdline"
hidden "-o redis=URL: daemon's /proc/PID/cmdline" "/proc/$(daemon_pid "$M4")/cmdline"
check "-o redis=URL: the other -o options still apply" grep -q "node n4" "$T/m4.log"

# tensorctl mount: it hands an inline password to the daemon in the environment instead.
M3=$T/m3
mkdir -p "$M3"
check "tensorctl mount with an inline password (daemon in the background)" \
	"$CTL" mount "$M3" --redis "unix://:$PW@$SOCK" --node n3 --prefix p3 --log "$T/m3.log"
pids=$(pgrep -f -- "$M3")
check "it serves" sh -c "echo x > '$M3/a'"
for p in $pids; do hidden "tensorctl's daemon (pid $p): /proc/PID/cmdline" "/proc/$p/cmdline"; done
check "no password in its log" not grep -qF -- "$PW" "$T/m3.log"
check "no inline-password warning: it came in the environment" not grep -q "password was given" "$T/m3.log"
check "tensorctl umount" "$CTL" umount "$M3"
for p in $pids; do for _ in $(seq 400); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done; done
finish
