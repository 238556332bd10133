# Out of file descriptors: a daemon and keeper started under `ulimit -n 256` (each tensor
# with host memory holds two descriptors in the daemon and one in the keeper). Creating
# tensors with bytes until refusal: the refusal is ENOSPC, not EIO, with one log line
# naming RLIMIT_NOFILE however many refusals follow; nothing half-made stays (the refused
# file keeps no bytes and no shared-memory object, a refused queue create leaves no
# record); unlinking some lets creates work again; the daemon that served from the start
# still serves.
. "$(dirname "$0")/../lib.sh"
ulimit -n 256
# host_pack=0: every tensor an object of its own, with its descriptors; packed tensors
# share their block's (perm/t_host_pack).
client_tools
export TFS_NODE=n1
one_mount --node n1 --backend host --max-bytes 64M -o host_pack=0
KEEPER=${MNT_PID[$M]}
D0=$(daemon_pid "$M")
objects() { find /dev/shm/tensorfs."$KEEPER".* -type f 2>/dev/null | wc -l; }
# fill DIR PREFIX MAX: tensors of 16 bytes DIR/PREFIX0.. until a write or create fails;
# prints how many were made and the errno's name of the one refused ("none": no refusal).
fill() {
	/usr/bin/python3 - "$@" <<'PY'
import errno, os, sys
d, prefix, most = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(most):
    try:
        fd = os.open("%s/%s%d" % (d, prefix, i), os.O_CREAT | os.O_WRONLY)
        try:
            os.write(fd, b"x" * 16)
        finally:
            os.close(fd)
    except OSError as e:
        print(i, errno.errorcode.get(e.errno, e.errno))
        sys.exit(0)
print(most, "none")
PY
}
read -r made why <<<"$(fill "$M" t 1000)"
since=$SECONDS
eq "creates until refusal: refused with ENOSPC (after $made)" ENOSPC "$why"
check "more than a hundred made first" test "$made" -gt 100
eq "the refused tensor holds no bytes" 0 "$(size_of "$M/t$made")"
eq "one shared-memory object per tensor with bytes, none for the refused one" "$made" "$(objects)"
# More refusals at once: still ENOSPC, still one line.
for i in 1 2 3; do
	read -r _ why <<<"$(fill "$M" "again$i-" 1)"
	eq "refusal $i more: ENOSPC" ENOSPC "$why"
done
check_err "a queue create refused: ENOSPC" "ENOSPC" "$TOOL" qcreate "$URL" q1 u8 '[16]'
eq "the refused queue create left no record" 0 "$(rcli exists tensorfs:tensor:q1)"
check "nor a name in the mount" not test -e "$M/q1"
eq "one shared-memory object per tensor with bytes" "$made" "$(objects)"
# One line a minute (nofile.h): the five refusals above take seconds, but a loaded machine
# may stretch them past a minute.
lines=$(grep -c 'out of file descriptors (RLIMIT_NOFILE 256;' "$T/m.log")
check "one log line for five refusals, naming the limit ($lines)" \
	test "$lines" -ge 1 -a "$lines" -le $((1 + (SECONDS - since) / 60))
# The handle socket, with the daemon at its limit: an answer (ENFILE, or the descriptor
# when the refusals left one free), not a connection left pending.
hsock=$(xget "$M/t50" handle_socket)
eq "a handle request at the limit is answered" ok "$(timeout 60 /usr/bin/python3 \
	"$ROOT/tests/integration/handle_get.py" "$hsock" r t50 | grep -qx -- '-23\|0 16' && echo ok)"
check "no EIO logged for the refusals" not grep -qi "answered nonsense\|input/output" "$T/m.log"

# Unlinking some gives their descriptors back.
for i in $(seq 0 9); do rm -f "$M/t$i"; done
check "unlinked tensors' objects go" soon test "$(objects)" -eq $((made - 10))
read -r again why <<<"$(fill "$M" u 5)"
eq "after unlinking ten: five new tensors with bytes" "5 none" "$again $why"
check "a queue create works again" "$TOOL" qcreate "$URL" q2 u8 '[16]'
eq "its record is there" 1 "$(rcli exists tensorfs:tensor:q2)"
eq "the same daemon serves" "$D0" "$(daemon_pid "$M")"
check "the mount answers" stat -f "$M"
check "bytes written before the refusals read back" test "$(cat "$M/t50")" = xxxxxxxxxxxxxxxx
finish
