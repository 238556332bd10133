# libtensorfs and Python on another node's tensor. Its handle is mapped first, as a local
# tensor's: on one machine n1's shared-memory object (its GPU memory on the cuda backend)
# maps into n2's clients, no daemon between. Where it does not map (another machine: no
# such object, a GPU handle that does not open), tfs_read and tfs_write (Tensor.read and
# write) go through the mount's descriptor, which the daemon forwards over UCX, and the
# mapping calls (the pointer, DLPack, numpy) answer EREMOTE naming the node. That other
# machine is a mount namespace with an empty /dev/shm of its own, no GPU visible and no
# mount of n1 (whose handle socket the library would find through it, lib/handle_socket.c).
. "$(dirname "$0")/netlib.sh"
net_nodes
client_tools
# elsewhere CMD...: CMD as on a machine without n1's memory.
elsewhere() {
	N1_MOUNT=$A unshare -m --propagation private sh -c 'mount -t tmpfs -o size=1m,mode=1777 tfs-elsewhere /dev/shm &&
		umount -l "$N1_MOUNT" && exec env -u N1_MOUNT CUDA_VISIBLE_DEVICES= "$@"' elsewhere "$@"
}
[ -z "$(elsewhere ls -A /dev/shm 2>&1)" ] || { nok "a mount namespace with an empty /dev/shm (unshare -m)"; exit 1; }
printf 'ABCDEFGH' > "$A/x"

# One machine: mapped.
eq "n1's tensor maps into n2's client on the same machine" "info.data set, mapped 1|data set|done" \
	"$(out "$TOOL" data "$B/x" | paste -sd'|')"
check "  DLPack exports it" "$TOOL" dlpack "$B/x"
eq "  tfs_read gives n1's bytes" 4142434445464748 "$(out "$TOOL" read "$B/x" 0 8 | head -1)"
check "  tfs_write" "$TOOL" write "$B/x" 0 7979
eq "  it lands in n1's memory" yyCDEFGH "$(cat "$A/x")"
eq "  Python: data_ptr set, read() and write()" "True ok" "$(out "${PY[@]}" - "$B/x" <<'PYEOF'
import sys, tensorfs
with tensorfs.open(sys.argv[1], "r+") as t:
    t.write(b"AB", 0)
    print(t.data_ptr != 0, "ok" if t.read() == b"ABCDEFGH" else "bad")
PYEOF
)"

# Elsewhere: through the descriptor.
eq "elsewhere: tfs_read from n2 gives n1's bytes" 4142434445464748 \
	"$(out elsewhere "$TOOL" read "$B/x" 0 8 | head -1)"
check "elsewhere: tfs_write from n2" elsewhere "$TOOL" write "$B/x" 2 7a7a
eq "it lands in n1's memory" ABzzEFGH "$(cat "$A/x")"
eq "tfs_read of a range" 7a4546 "$(out elsewhere "$TOOL" read "$B/x" 3 3 | head -1)"
check_err "a range past the end is refused" "EINVAL" elsewhere "$TOOL" read "$B/x" 6 3
check_err "tfs_write on a read-only open is refused" "EBADF" elsewhere "$TOOL" write-ro "$B/x"
check_err "tfs_to_dlpack: EREMOTE naming the node" "EREMOTE: tfs_to_dlpack: the bytes are on node n1" \
	elsewhere "$TOOL" dlpack "$B/x"
check_err "tfs_tensor_data: EREMOTE, can be read and written but not mapped" \
	"read and written (tfs_read, tfs_write) but not mapped" elsewhere "$TOOL" data "$B/x"
eq "info.data NULL, nothing mapped" "info.data NULL, mapped 0" \
	"$(out elsewhere "$TOOL" data "$B/x" | head -1)"
getfattr --absolute-names --only-values -n user.tensor.meta "$B/x" > "$T/x.json"
check_err "tfs_open_meta of it: EREMOTE, no descriptor to go through" \
	"EREMOTE: the tensor's bytes are on node n1 and do not map here" elsewhere "$TOOL" open-meta "$T/x.json"
eq "n1's own tensor is mapped on n1" "data set" "$(out "$TOOL" data "$A/x" | grep '^data')"
rand_tensor "$A/big" $((5 * 1024 * 1024 + 123))
eq "a 3 MiB tfs_read at 1 MiB from n2" \
	"$(dd if="$T/big.src" bs=1M skip=1 count=3 status=none | od -An -v -tx1 | tr -d ' \n' | md5sum)" \
	"$(out elsewhere "$TOOL" read "$B/big" 1048576 3145728 | head -1 | tr -d '\n' | md5sum)"
eq "Python read() and write() from n2" "True ok 0" "$(out elsewhere "${PY[@]}" - "$B/big" "$T/big.src" <<'PYEOF'
import sys, tensorfs
src = open(sys.argv[2], "rb").read()
with tensorfs.open(sys.argv[1], "r+") as t:
    same = t.read() == src
    t.write(b"\x01\x02\x03", 4096)
    print(same, "ok" if t.read(4096, 3) == b"\x01\x02\x03" else "bad", t.data_ptr)
PYEOF
)"
eq "the Python write is in n1's memory" 010203 \
	"$(dd if="$A/big" bs=1 skip=4096 count=3 status=none | od -An -tx1 | tr -d ' \n')"
eq "Python numpy(): EREMOTE" "EREMOTE n1" "$(out elsewhere "${PY[@]}" - "$B/big" <<'PYEOF'
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
