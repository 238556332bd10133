# The handle socket's request by descriptor (core/fd_request.h): a tensor whose memory comes
# from the socket and whose name was removed or replaced since it was opened has no name
# to be asked by; tfs_open_fd sends the open descriptor itself, which the daemon knows the
# tensor by and which proves the access it was opened for. Hostile descriptors are refused
# with a clear errno and leave the connection usable or closed, never the daemon hurt.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
A=$T/a
mount_tfs "$A" --backend host || exit 1
TOOL=$HELPERS/tfs_client_tool
# Memory only through the socket (as --memory vmm tensors always are): the shared-memory
# name of r's and u's block is removed.
printf 'abcdefgh' > "$A/r"
printf 'ABCDEFGH' > "$A/u"
obj=/dev/shm$(xget "$A/r" ipc_handle | tail -c +9 | tr -d '\0')
check "r's block has a shared-memory object" test -f "$obj"
rm -f "$obj"
sock=$(xget "$A/r" handle_socket)
uoff=$(xget "$A/u" ipc_offset)
out=$("$TOOL" unlinked "$A/r" 2>&1)
check "an open tensor unlinked before tfs_open_fd opens by its descriptor" \
	grep -q "^2a$" <<< "$out"
echo "$out" | sed 's/^/# /'
/usr/bin/python3 - "$sock" "$A" "$uoff" > "$T/py.out" 2>&1 <<'PY'
import os, socket, sys
sock, mnt, uoff = sys.argv[1], sys.argv[2], int(sys.argv[3])

def ask(line, fds=()):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(sock)
    socket.send_fds(s, [line], list(fds))
    msg, got, _, _ = socket.recv_fds(s, 512, 16)
    s.close()
    return msg.decode().strip(), got

u = os.open(os.path.join(mnt, "u"), os.O_RDONLY)
os.unlink(os.path.join(mnt, "u"))
msg, got = ask(b"r\n", [u])
# The descriptor is of the block u is packed in (with r): u's bytes are at its offset.
print("ro-r", msg, os.pread(got[0], 8, uoff).decode() if got else "")
print("ro-w", ask(b"w\n", [u])[0])
print("none", ask(b"r\n")[0])
null = os.open("/dev/null", os.O_RDONLY)
print("null", ask(b"r\n", [null])[0])
d = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
print("dir", ask(b"r\n", [d])[0])
p = os.open(os.path.join(mnt, "w"), os.O_RDWR | os.O_CREAT, 0o644)
os.close(p)
p = os.open(os.path.join(mnt, "w"), os.O_PATH)
print("opath", ask(b"r\n", [p])[0])
# A second descriptor before the first one's request: refused, the connection goes.
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(30)
s.connect(sock)
socket.send_fds(s, [b"r"], [u])
socket.send_fds(s, [b" "], [null])
msg, got, _, _ = socket.recv_fds(s, 512, 16)
print("two", msg.decode().strip(), "closed" if s.recv(16) == b"" else "open")
s.close()
# The socket still serves a good request after all that.
print("after", ask(b"r\n", [u])[0])
PY
sed 's/^/# /' "$T/py.out"
eq "by descriptor: read of an unlinked tensor" "ro-r 0 8 ABCDEFGH" "$(grep '^ro-r' "$T/py.out")"
eq "write with a read-only descriptor: EACCES" "ro-w -13" "$(grep '^ro-w' "$T/py.out")"
eq "no descriptor sent: EBADF" "none -9" "$(grep '^none' "$T/py.out")"
eq "a descriptor of another file system: EXDEV" "null -18" "$(grep '^null' "$T/py.out")"
eq "a directory of the mount: EISDIR" "dir -21" "$(grep '^dir' "$T/py.out")"
eq "an O_PATH descriptor (opened with no permission check): EBADF" "opath -9" \
	"$(grep '^opath' "$T/py.out")"
eq "a second descriptor before its request: EINVAL, the connection closed" "two -22 closed" \
	"$(grep '^two' "$T/py.out")"
eq "the socket serves on" "after 0 8" "$(grep '^after' "$T/py.out")"
check "the daemon lives" serves_within 20 "$A"
finish
