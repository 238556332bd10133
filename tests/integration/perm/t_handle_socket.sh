# The handle socket (fs/handles/server.h, issue 36): a process gets a tensor's memory as a
# descriptor after the daemon checked, from the socket's peer credentials, that it may read
# (or write) the tensor as through the mount. Read gives a read-only descriptor; a user
# without read permission gets EACCES, one without write permission EACCES for "w";
# malformed requests get EINVAL and lose the connection; idle connections beyond the bound
# do not stop others from being served.
. "$(dirname "$0")/../lib.sh"
SOCKP=$T/handles.sock
# The host backend: its memory has descriptors (the cuda backend's legacy IPC memory has
# none, and its socket answers ENOTSUP).
other_uid_mount --backend host --handle-socket "$SOCKP"
cp "$ROOT/tests/integration/handle_get.py" "$T/"
G="/usr/bin/python3 $T/handle_get.py"
mkdir "$M/d"
head -c 70000 /dev/urandom > "$T/pub"; cp "$T/pub" "$M/d/pub"
head -c 5000 /dev/urandom > "$T/priv"; cp "$T/priv" "$M/d/priv"
chmod 644 "$M/d/pub"; chmod 600 "$M/d/priv"
eq "handle_socket names the socket" "$SOCKP" "$(xget "$M/d/pub" handle_socket)"
eq "handle_type of a host tensor" posix_fd "$(xget "$M/d/pub" handle_type)"
eq "the socket is mode 0666" 666 "$(stat -c %a "$SOCKP")"
eq "root reads pub" "0 70000
same
ro" "$($G "$SOCKP" r d/pub check "$T/pub")"
eq "root writes through a w descriptor" "0 5000
written" "$($G "$SOCKP" w d/priv write HELLO)"
eq "the write shows through the mount" HELLO "$(head -c 5 "$M/d/priv")"
eq "another uid reads pub (mode 644)" "0 70000
same
ro" "$($NOBODY $G "$SOCKP" r d/pub check "$T/pub")"
eq "another uid may not write pub" "-13" "$($NOBODY $G "$SOCKP" w d/pub)"
eq "another uid may not read priv (mode 600): EACCES" "-13" "$($NOBODY $G "$SOCKP" r d/priv)"
chmod 700 "$M/d"; chmod 666 "$M/d/pub"
eq "nor pub once the directory is 700" "-13" "$($NOBODY $G "$SOCKP" r d/pub)"
chmod 755 "$M/d"
eq "a name that is not there: ENOENT" "-2" "$($G "$SOCKP" r d/none)"
eq "a directory: ENOENT" "-2" "$($G "$SOCKP" r d)"
eq "a path with ..: EINVAL" "-22" "$($G "$SOCKP" r ../etc/passwd)"
eq "garbage: EINVAL" "-22" "$($G "$SOCKP" r x raw 'hello there\n')"
eq "an oversize request: ENAMETOOLONG" "-36" "$($G "$SOCKP" r x raw "r $(head -c 5000 /dev/zero | tr '\0' a)")"
# 70 idle connections (the bound is 64): the ones past it are told EAGAIN at once, and a
# real request is served once the idle ones time out (HANDLES_IDLE_MS), or sooner.
/usr/bin/python3 - "$SOCKP" <<'PY' &
import socket, sys, time
cs = []
for _ in range(70):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    cs.append(s)
time.sleep(20)
PY
idle=$!
sleep 1
ok=0
for _ in $(seq 120); do
	[ "$($G "$SOCKP" r d/pub check "$T/pub" | head -1)" = "0 70000" ] && { ok=1; break; }
	sleep 0.25
done
eq "served despite 70 idle connections" 1 "$ok"
kill "$idle"; wait "$idle" 2>/dev/null
eq "the daemon still serves the mount" "$(md5sum < "$T/pub")" "$(md5sum < "$M/d/pub")"
finish
