# handle_get.py SOCKET ACCESS NAME [check FILE | write DATA | raw BYTES]: asks the handle
# socket (fs/handles/server.h) for NAME's descriptor with ACCESS (r or w); prints the reply
# line, then, with check, whether the descriptor's bytes equal FILE's ("same"/"differ") and
# whether writing through a read descriptor fails ("ro"/"rw"); with write, writes DATA at
# offset 0 through it; with raw, sends BYTES (Python escapes) instead of a request.
import os, socket, sys

path, access, name = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(30)
s.connect(path)
try:
    if len(sys.argv) > 5 and sys.argv[4] == "raw":
        s.sendall(sys.argv[5].encode().decode("unicode_escape").encode("latin-1"))
    else:
        s.sendall(f"{access} {name}\n".encode())
except BrokenPipeError:
    pass    # the server answered and closed first (a full table): its reply is read below
msg, fds, _, _ = socket.recv_fds(s, 512, 16)
print(msg.decode().strip())
if not fds:
    sys.exit(0)
fd = fds[0]
if len(sys.argv) > 5 and sys.argv[4] == "check":
    want = open(sys.argv[5], "rb").read()
    got = os.pread(fd, len(want), 0)
    print("same" if got == want else "differ")
    try:
        os.pwrite(fd, b"x", 0)
        print("rw")
    except OSError:
        print("ro")
elif len(sys.argv) > 5 and sys.argv[4] == "write":
    os.pwrite(fd, sys.argv[5].encode(), 0)
    print("written")
