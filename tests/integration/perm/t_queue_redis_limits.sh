# The Redis limits docs/security.md recommends for untrusted queue senders work with a
# real redis-server and the daemon (issue 32, item 5): proto-max-bulk-len 1mb,
# client-query-buffer-limit 8mb, maxmemory with noeviction, the default user off. The
# daemon's own writes (a 64 KiB attribute, queue answers, ACL users) go through; a
# sender's 8 MiB command is refused by Redis itself; one of 512 KiB is answered EMSGSIZE.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/quser_lib.sh"
cat > "$T/redis.conf" <<CONF
port 0
unixsocket $SOCK
save ""
appendonly no
dir $T
logfile $T/redis.log
proto-max-bulk-len 1mb
client-query-buffer-limit 8mb
maxmemory 256mb
maxmemory-policy noeviction
user default off
user admin on >adminpw ~* &* +@all
CONF
redis-server "$T/redis.conf" >/dev/null 2>&1 3<&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&- &
REDIS_PID=$!
URL="unix://admin:adminpw@$SOCK"
rcli() { tfs_flush; redis-cli -s "$SOCK" --user admin --pass adminpw --no-auth-warning "$@"; }
for _ in $(seq 100); do rcli ping >/dev/null 2>&1 && break; sleep 0.05; done
eq "the recommended settings are taken" "1048576 8388608 noeviction" \
	"$(rcli config get proto-max-bulk-len | tail -1) $(rcli config get client-query-buffer-limit | tail -1) $(rcli config get maxmemory-policy | tail -1)"
M=$T/m
quser_mount "$M" --node n1 || exit 1
mkdir "$M/u"; chown $QUID "$M/u"
check "the daemon serves: mkdir" mkdir "$M/d"
head -c 65536 /dev/zero | tr '\0' a > "$T/64k"
check "a 64 KiB attribute goes to Redis" setfattr -n user.big -v "$(cat "$T/64k")" "$M/d"
eq "and is there" 65536 "$(rcli hget tensorfs:dir:d x:big | tr -d '\n' | wc -c)"
r=$(qsend '{"op":"create","name":"rootq","dtype":"f32","shape":[4]}' 10)
eq "root's queue create" True "$(jfield "$r" ok)"
r=$(usend '{"op":"create","name":"u/mine","dtype":"u8","shape":[8]}' 10)
eq "the user's queue create" True "$(jfield "$r" ok)"
# big N SIZE NAME: one LPUSH of a command of SIZE bytes as the user; prints Redis's answer
big() {
	as_user /usr/bin/python3 - "$SOCK" "$QUSER" "$QPASS" "$QLIST" "$@" <<'PY'
import socket, sys
sock, user, pw, lst, size, name = sys.argv[1:7]
s = socket.socket(socket.AF_UNIX); s.connect(sock)
def bulk(b): return b"$%d\r\n%s\r\n" % (len(b), b)
s.sendall(b"*3\r\n" + bulk(b"AUTH") + bulk(user.encode()) + bulk(pw.encode()))
assert s.recv(100).startswith(b"+OK")
head = ('{"id":"%s","reply":"%s:reply:%s","op":"get","name":"x","pad":"' % (name, lst, name)).encode()
try:
    s.sendall(b"*3\r\n" + bulk(b"LPUSH") + bulk(lst.encode()) + bulk(head + b"x" * (int(size) - len(head) - 2) + b'"}'))
    print(s.recv(200).decode().strip() or "closed")
except OSError as e:
    print("closed")
PY
}
out=$(big $((8 << 20)) b8)
# Redis answers a protocol error and closes the connection, often before the sender is
# done writing.
check "a command of 8 MiB: Redis refuses it (proto-max-bulk-len): $out" sh -c "echo '$out' | grep -q 'invalid bulk length\|^closed'"
eq "nothing of it reached the list" 0 "$(rcli llen "$QLIST")"
eq "a command of 512 KiB: taken by Redis" ":1" "$(big $((512 << 10)) b512)"
r=$(ucli brpop "$QLIST:reply:b512" 10 | tail -n 1)
eq "and answered EMSGSIZE by the daemon" EMSGSIZE "$(jfield "$r" error)"
check "root's mount still serves" mkdir "$M/after"
finish
