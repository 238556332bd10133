# --memory vmm (docs/vmm.md): every tensor its own VMM allocation, exported as a POSIX
# descriptor that the handle socket hands out after its permission check. A new process
# opens tensors with libtensorfs (tfs_open: descriptor from the socket, import, map, then
# tfs_read); handle_type is posix_fd; SIGKILL of the keeper, then of the daemon, loses no
# tensor (the two holders); a process without read permission is refused with EACCES; a
# truncate to a larger size keeps the bytes; growth is allowed while another process holds
# the tensor.
EXPECT_RESTARTS=1
. "$(dirname "$0")/gpulib.sh"
gpu_tests "vmm: handle_type posix_fd" "vmm: a new process reads equal bytes (tfs_open + tfs_read)" \
	"vmm: keeper killed: every tensor back" "vmm: daemon killed: every tensor back" \
	"vmm: no read permission: EACCES from the socket" "vmm: truncate larger keeps the bytes" \
	"vmm: growth while held, within the allocation" \
	"vmm: tfs_open_meta of user.tensor.meta reads equal bytes" \
	"vmm: the queue's get maps it (tfs_get)" "vmm: Python open_meta, Client.get and torch DLPack" \
	"vmm: small tensors of one directory share an allocation" \
	"vmm: a packed tensor reads equal bytes (tfs_open + tfs_read)" \
	"vmm: chmod 600 moves it out of the shared allocation" \
	"vmm: a packed tensor grown past 1 MiB gets its own allocation"
. "$GROOT/tests/integration/crash/holders.sh"
start_redis || exit 1
M=$T/m
SOCKP=$T/handles.sock
mount_cuda "$M" --node n1 --memory vmm --allow-other --handle-socket "$SOCKP" || exit 1
chmod 755 "$T"
client_tools
cp "$GROOT/tests/integration/handle_get.py" "$T/"
G="/usr/bin/python3 $T/handle_get.py"
# hexof FILE: the md5 of its bytes as hex; tfsread FILE: the same of what a new process
# reads with libtensorfs (tfs_open, tfs_read)
hexof() { od -An -v -tx1 < "$1" | tr -d ' \n' | md5sum; }
tfsread() { "$TOOL" read "$1" 0 "$(stat -c %s "$1")" | head -1 | tr -d '\n' | md5sum; }

head -c 3000000 /dev/urandom > "$T/r"
check "cp a 3 MB file in" cp "$T/r" "$M/w"
eq "vmm: handle_type posix_fd" posix_fd "$(xget "$M/w" handle_type)"
eq "the handle is a VMM one" TFSVMM01 "$(xget "$M/w" ipc_handle | head -c 8)"
eq "ipc_offset 0" 0 "$(xget "$M/w" ipc_offset)"
eq "read() through the mount" "$(md5sum < "$T/r")" "$(md5sum < "$M/w")"
eq "vmm: a new process reads equal bytes (tfs_open + tfs_read)" "$(hexof "$T/r")" "$(tfsread "$M/w")"
# cp grows the tensor by its writes: packed up to 1 MiB, then an allocation of its own that
# grows in place by a chunk (docs/vmm.md#growth), so the reply may list chunk sizes after
# the tensor's: the status and size are what is checked here (t_vmm_grow.sh: the chunks)
eq "the socket hands out the descriptor" "0 3000000" "$($G "$SOCKP" r w | head -1 | cut -d' ' -f1,2)"
eq "tfs_open of a VMM tensor is on the device" cuda "$("$TOOL" info "$M/w" | head -1 | awk '{print $(NF-1)}')"

# without a file of the mount (docs/vmm.md, Opening): the metadata names the socket and
# the tensor, the library asks the socket by name
getfattr --only-values -n user.tensor.meta "$M/w" > "$T/w.json"
eq "user.tensor.meta names the handle socket" "$SOCKP" "$(jfield "$(cat "$T/w.json")" handle_socket)"
eq "and the tensor" w "$(jfield "$(cat "$T/w.json")" name)"
eq "vmm: tfs_open_meta of user.tensor.meta reads equal bytes" "$(hexof "$T/r")" \
	"$("$TOOL" open-meta "$T/w.json" 3000000 | sed -n 2p | tr -d '\n' | md5sum)"
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); del d['handle_socket']; print(json.dumps(d))" \
	"$T/w.json" > "$T/nosock.json"
check_err "without handle_socket: ENOTSUP, saying why" "handle socket" "$TOOL" open-meta "$T/nosock.json"
head -c 1000 /dev/urandom > "$M/small"
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['name']='small'; print(json.dumps(d))" \
	"$T/w.json" > "$T/small.json"
check_err "a name that is another tensor of another size now: ESTALE" "another one" "$TOOL" open-meta "$T/small.json"
rm -f "$M/small"
first8=$(head -c 8 "$T/r" | od -An -v -tx1 | tr -d ' \n')
eq "vmm: the queue's get maps it (tfs_get)" "$first8" "$(TFS_NODE=n1 "$TOOL" qgetdel "$URL" w | sed -n 2p)"
eq "the get's hold is given back" 1 "$(xget "$M/w" refcount)"
PY=${TFS_PYTHON:-python3}
if "$PY" -c "import torch" 2>/dev/null; then
	PYOUT=$(PYTHONPATH=$GROOT/python TENSORFS_LIBRARY=$GROOT/$GBUILD/libtensorfs.so "$PY" - "$T/w.json" "$URL" <<'PY' 2>&1
import sys, torch, tensorfs
meta = open(sys.argv[1]).read()
a = tensorfs.open_meta(meta).read(0, 8).hex()
with tensorfs.Client(sys.argv[2], node="n1") as c:
    t = c.get("w")
    b = t.read(0, 8).hex()
    x = torch.from_dlpack(t)
    d = bytes(x[:8].cpu().numpy().tobytes()).hex()
    print(a, b, d, x.device.type)
    del x
    t.close()
    c.delete("w")
PY
)
	eq "vmm: Python open_meta, Client.get and torch DLPack" "$first8 $first8 $first8 cuda" "$PYOUT"
else
	echo "skip - vmm: Python open_meta, Client.get and torch DLPack: $PY has no torch"
fi

# permission: the socket's check, and the mount's
cp "$T/r" "$M/priv"; chmod 600 "$M/priv"
eq "vmm: no read permission: EACCES from the socket" "-13" "$($NOBODY $G "$SOCKP" r priv)"
chmod 644 "$M/priv"
eq "another uid with read permission gets the descriptor" "0 3000000" "$($NOBODY $G "$SOCKP" r priv | head -1 | cut -d' ' -f1,2)"

# growth: within the allocation (3 MB rounds up to 4 MiB) in place, past it by a new one
h0=$(xget "$M/w" ipc_handle | md5sum)
truncate -s 4000000 "$M/w"
eq "growth within the allocation keeps the handle" "$h0" "$(xget "$M/w" ipc_handle | md5sum)"
{ cat "$T/r"; head -c 1000000 /dev/zero; } > "$T/r4"
eq "growth within: bytes kept, zeros behind" "$(md5sum < "$T/r4")" "$(md5sum < "$M/w")"
truncate -s 9000000 "$M/w"
{ cat "$T/r"; head -c 6000000 /dev/zero; } > "$T/r9"
eq "vmm: truncate larger keeps the bytes" "$(md5sum < "$T/r9")" "$(md5sum < "$M/w")"
eq "and a new process reads them" "$(hexof "$T/r9")" "$(tfsread "$M/w")"
# growth while another process holds the tensor open (mapped): in place it may grow, and
# the holder's mapping covers it; past the allocation a chunk more is mapped at its end
# (t_vmm_grow.sh tests it further). 1.2 MB: an allocation of its own (2 MiB), not packed
head -c 1200000 /dev/urandom > "$M/h"
"$TOOL" hold "$M/h" 60 > "$T/hold.out" 2>&1 &
hp=$!
wait_for grep -q held "$T/hold.out"
check "vmm: growth while held, within the allocation" truncate -s 2000000 "$M/h"
eq "its size" 2000000 "$(stat -c %s "$M/h")"
check "growth while held past the allocation: in place, a chunk more" truncate -s 3000000 "$M/h"
eq "its size" 3000000 "$(stat -c %s "$M/h")"
kill "$hp"; wait "$hp" 2>/dev/null
rm -f "$M/w" "$M/priv" "$M/h"

# packing (docs/vmm.md): tensors up to 1 MiB share VMM allocations under the legacy
# blocks' rule (one directory, one set of readers per allocation), at an offset
mkdir -m 755 "$M/p" "$M/q"
for i in 1 2 3; do head -c 5000 /dev/urandom > "$T/s$i"; cp "$T/s$i" "$M/p/s$i"; done
cp "$T/s3" "$M/q/s3"
eq "vmm: small tensors of one directory share an allocation" 1 \
	"$(for i in 1 2 3; do hexh "$M/p/s$i"; echo; done | sort -u | wc -l)"
check "at different offsets" test "$(xget "$M/p/s1" ipc_offset)" != "$(xget "$M/p/s2" ipc_offset)"
check "another directory's does not share it" test "$(hexh "$M/q/s3")" != "$(hexh "$M/p/s1")"
eq "the handle names a 2 MiB allocation" 2097152 \
	"$(/usr/bin/python3 -c "import sys; print(int.from_bytes(bytes.fromhex(sys.argv[1])[16:24], 'little'))" "$(hexh "$M/p/s2")")"
eq "vmm: a packed tensor reads equal bytes (tfs_open + tfs_read)" "$(hexof "$T/s2")" "$(tfsread "$M/p/s2")"
eq "and through the handle socket at its offset (consumer)" "$(md5sum < "$T/s2")" "$(dump "$M/p/s2" | md5sum)"
getfattr --only-values -n user.tensor.meta "$M/p/s3" > "$T/s3.json"
eq "and by tfs_open_meta" "$(hexof "$T/s3")" \
	"$("$TOOL" open-meta "$T/s3.json" 5000 | sed -n 2p | tr -d '\n' | md5sum)"
eq "the socket hands out the allocation for it" "0 5000" "$($G "$SOCKP" r p/s1 | head -1)"
h0=$(hexh "$M/p/s1")
chmod 600 "$M/p/s1"
check "vmm: chmod 600 moves it out of the shared allocation" test "$(hexh "$M/p/s1")" != "$h0"
check "its bytes kept" cmp "$T/s1" "$M/p/s1"
truncate -s 3000000 "$M/p/s2"
check "vmm: a packed tensor grown past 1 MiB gets its own allocation" \
	test "$(hexh "$M/p/s2")" != "$h0" -a "$(xget "$M/p/s2" ipc_offset)" = 0
{ cat "$T/s2"; head -c 2995000 /dev/zero; } > "$T/s2big"
check "its bytes kept, zeros behind" cmp "$T/s2big" "$M/p/s2"
check "and a new process reads them" test "$(hexof "$T/s2big")" = "$(tfsread "$M/p/s2")"
check "the one left in the allocation still reads right" bash -c "dump '$M/p/s3' | cmp - '$T/s3'"

# the two holders (small and large tensors: a restart adopts packed allocations too)
holders_setup "$M"
check "the keeper is replaced after its SIGKILL" kill_keeper "$M"
holders_check "$M" "vmm: keeper killed: every tensor back"
check "the daemon starts again after its SIGKILL" kill_daemon "$M"
holders_check "$M" "vmm: daemon killed: every tensor back"
check "the log says vmm allocations were adopted" grep -q "adopted" "$T/m.log"
check "after the restarts the packed tensor of p reads right" bash -c "dump '$M/p/s3' | cmp - '$T/s3' && cmp '$M/p/s3' '$T/s3'"
kill "$HOLDER"; wait "$HOLDER" 2>/dev/null
fusermount3 -u "$M"
cd /
finish
