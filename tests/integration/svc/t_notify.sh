# systemd's readiness protocol without systemd: a datagram socket stands in for the
# manager's $NOTIFY_SOCKET. The daemon (in the background, as the unit runs it) must send
# READY=1 with MAINPID= its memory keeper (the parent of the serving process, which restarts
# it after a crash: fs/mem/keeper/keeper.h), and only once the mount answers.
. "$(dirname "$0")/../lib.sh"
cd "$T"
PY=/usr/bin/python3
start_redis || exit 1
M=$T/m
mkdir -p "$M"
# The listener writes what it receives, with whether the mount answered at that moment.
cat > listen.py <<'PYEOF'
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[1] + ".up", "w").close()
s.settimeout(30)
msg = s.recv(4096).decode()
mounted = os.path.ismount(sys.argv[2])
with open(sys.argv[3], "w") as f:
    f.write(msg + ("MOUNTED\n" if mounted else "NOT-MOUNTED\n"))
PYEOF
"$PY" listen.py "$T/notify.sock" "$M" "$T/got" &
lpid=$!
for _ in $(seq 400); do [ -e "$T/notify.sock.up" ] && break; sleep 0.05; done
check "the daemon starts in the background with NOTIFY_SOCKET set" \
	env NOTIFY_SOCKET="$T/notify.sock" "$TFS" --redis "$URL" --log "$T/m.log" "$M"
wait $lpid
pid=$(getfattr --only-values -n user.tensorfs.stats "$M" 2>/dev/null | grep -o '"pid":[0-9]*' | cut -d: -f2)
keeper=$(ps -o ppid= -p "${pid:-1}" | tr -d ' ')
check "the manager got READY=1" grep -qx READY=1 got
eq "MAINPID is the keeper of the process that serves the mount" "MAINPID=${keeper:-none}" "$(grep MAINPID got)"
check "the mount is up when READY=1 arrives" grep -qx MOUNTED got
# An abstract socket name (@...), as systemd may use.
"$PY" - "$T/got2" <<'PYEOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0tensorfs-test-notify-%d" % __import__("os").getpid())
open(sys.argv[1] + ".name", "w").write("@tensorfs-test-notify-%d" % __import__("os").getpid())
s.settimeout(30)
open(sys.argv[1], "w").write(s.recv(4096).decode())
PYEOF
apid=$!
for _ in $(seq 400); do [ -s "$T/got2.name" ] && break; sleep 0.05; done
M2=$T/m2
mkdir -p "$M2"
check "a second daemon with an abstract NOTIFY_SOCKET starts" \
	env NOTIFY_SOCKET="$(cat "$T/got2.name")" "$TFS" --redis "$URL" --node n2 --log "$T/m2.log" "$M2"
wait $apid
check "it sent READY=1 there" grep -qx READY=1 got2
mkdir -p "$T/m3"
check "a NOTIFY_SOCKET that is not a unix path: a warning, the mount works" bash -c \
	"NOTIFY_SOCKET=vsock:2:1 '$TFS' --redis '$URL' --node n3 --log '$T/m3.log' '$T/m3' &&
	 mountpoint -q '$T/m3' && grep -q 'cannot tell systemd' '$T/m3.log'"
for d in "$M" "$M2" "$T/m3"; do
	p=$(getfattr --only-values -n user.tensorfs.stats "$d" 2>/dev/null | grep -o '"pid":[0-9]*' | cut -d: -f2)
	fusermount3 -u "$d"
	for _ in $(seq 400); do kill -0 "${p:-none}" 2>/dev/null || break; sleep 0.05; done
	check "$(basename "$d"): unmounted, the daemon exited" bash -c "! mountpoint -q '$d' && ! kill -0 ${p:-none} 2>/dev/null"
done
finish
