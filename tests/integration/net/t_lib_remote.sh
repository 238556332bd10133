# libtensorfs and Python on another node's tensor: tfs_open maps nothing, tfs_read and
# tfs_write (Tensor.read/write) go through the mount's descriptor, which the daemon
# forwards over UCX; mapping (the pointer, DLPack, numpy) is EREMOTE, naming the node.
. "$(dirname "$0")/netlib.sh"
net_nodes
client_tools
printf 'ABCDEFGH' > "$A/x"
eq "tfs_read from n2 gives n1's bytes" 4142434445464748 "$(out "$TOOL" read "$B/x" 0 8 | head -1)"
check "tfs_write from n2" "$TOOL" write "$B/x" 2 7a7a
eq "it lands in n1's memory" ABzzEFGH "$(cat "$A/x")"
eq "tfs_read of a range" 7a4546 "$(out "$TOOL" read "$B/x" 3 3 | head -1)"
check_err "a range past the end is refused" "EINVAL" "$TOOL" read "$B/x" 6 3
check_err "tfs_write on a read-only open is refused" "EBADF" "$TOOL" write-ro "$B/x"
check_err "tfs_to_dlpack: EREMOTE naming the node" "EREMOTE: tfs_to_dlpack: the bytes are on node n1" \
	"$TOOL" dlpack "$B/x"
check_err "tfs_tensor_data: EREMOTE, can be read and written but not mapped" \
	"read and written (tfs_read, tfs_write) but not mapped" "$TOOL" data "$B/x"
eq "info.data NULL, nothing mapped" "info.data NULL, mapped 0" "$(out "$TOOL" data "$B/x" | head -1)"
eq "n1's own tensor is still mapped on n1" "data set" "$(out "$TOOL" data "$A/x" | grep '^data')"
rand_tensor "$A/big" $((5 * 1024 * 1024 + 123))
eq "a 3 MiB tfs_read at 1 MiB from n2" \
	"$(dd if="$T/big.src" bs=1M skip=1 count=3 status=none | od -An -v -tx1 | tr -d ' \n' | md5sum)" \
	"$(out "$TOOL" read "$B/big" 1048576 3145728 | head -1 | tr -d '\n' | md5sum)"
PY=(env PYTHONPATH="$ROOT/python" TENSORFS_LIBRARY="$ROOT/$BUILD/libtensorfs.so" /usr/bin/python3)
eq "Python read() and write() from n2" "True ok" "$(out "${PY[@]}" - "$B/big" "$T/big.src" <<'PYEOF'
import sys, tensorfs
src = open(sys.argv[2], "rb").read()
with tensorfs.open(sys.argv[1], "r+") as t:
    same = t.read() == src
    t.write(b"\x01\x02\x03", 4096)
    print(same, "ok" if t.read(4096, 3) == b"\x01\x02\x03" else "bad")
PYEOF
)"
eq "the Python write is in n1's memory" 010203 \
	"$(dd if="$A/big" bs=1 skip=4096 count=3 status=none | od -An -tx1 | tr -d ' \n')"
eq "Python numpy(): EREMOTE" "EREMOTE n1" "$(out "${PY[@]}" - "$B/big" <<'PYEOF'
import errno, sys, tensorfs
with tensorfs.open(sys.argv[1]) as t:
    try:
        t.numpy()
        print("mapped")
    except tensorfs.Error as e:
        print(errno.errorcode[e.errno], "n1" if "node n1" in str(e) else str(e))
PYEOF
)"
finish
