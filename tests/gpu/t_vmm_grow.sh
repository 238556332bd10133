# Growth in place of --memory vmm (docs/vmm.md#growth): a tensor another process holds
# (tfs_open, its pointer from tfs_tensor_get_info) grows well past its allocation by a
# truncate and by a write past its end; the growth succeeds, the holder's pointer stays and
# keeps its bytes (the first chunk is the same memory: what it writes there the tensor
# reads), a new open sees the whole new size (old bytes, then zeros) and, in the holder's
# own process, maps it at the holder's address (past the room behind that mapping, at
# another one), the handle socket
# hands out every chunk; growth stops at 16 chunks (EBUSY while held, a move when not);
# a packed tensor grown past 1 MiB while held is EBUSY; SIGKILL of the keeper, then of the
# daemon, after growths: every chunk back, bytes equal, and the tensors grow again.
# Assumes the 2 MiB allocation granularity of the H100/H200 (the reply sizes below).
EXPECT_RESTARTS=1
. "$(dirname "$0")/gpulib.sh"
gpu_tests "vmm grow: growth while held past the allocation (truncate)" \
	"vmm grow: the holder's pointer stays the same" \
	"vmm grow: the holder's pointer keeps its bytes" \
	"vmm grow: what the holder writes through its pointer the tensor reads" \
	"vmm grow: the holder's new open maps the grown tensor at its first address" \
	"vmm grow: a new open sees the whole size, old bytes then zeros" \
	"vmm grow: the socket hands out both chunks" \
	"vmm grow: a write past the end while held grows it" \
	"vmm grow: 16 chunks at most, then EBUSY while held" \
	"vmm grow: unheld past 16 chunks it moves" \
	"vmm grow: a packed tensor grown past 1 MiB while held: EBUSY" \
	"vmm grow: keeper killed: every chunk back" "vmm grow: daemon killed: every chunk back" \
	"vmm grow: torch DLPack holder keeps its pointer and bytes" \
	"vmm grow: a torch holder's new open: the whole tensor at the first address" \
	"vmm grow: past the room behind its mapping a new open maps afresh"
. "$GROOT/tests/integration/crash/holders.sh"
start_redis || exit 1
M=$T/m
SOCKP=$T/handles.sock
mount_cuda "$M" --node n1 --memory vmm --allow-other --handle-socket "$SOCKP" || exit 1
chmod 755 "$T"
client_tools
cp "$GROOT/tests/integration/handle_get.py" "$T/"
G="/usr/bin/python3 $T/handle_get.py"
hexof() { od -An -v -tx1 < "$1" | tr -d ' \n' | md5sum; }
tfsread() { "$TOOL" read "$1" 0 "$(stat -c %s "$1")" | head -1 | tr -d '\n' | md5sum; }
# hid FILE: the handle's id (bytes 0..15: magic and the first chunk's id); hsize FILE: its
# size field (the chunks' sizes added)
hid() { hexh "$1" | cut -c1-32; }
hsize() { /usr/bin/python3 -c "import sys; print(int.from_bytes(bytes.fromhex(sys.argv[1])[16:24], 'little'))" "$(hexh "$1")"; }

# mkfile FILE SRC: FILE made at SRC's size in one step (one allocation: written by appends
# it would grow by chunks), then SRC's bytes written into it
mkfile() {
	truncate -s "$(stat -c %s "$2")" "$1" && dd if="$2" of="$1" bs=1M conv=notrunc status=none
}

# 1. truncate well past the allocation while a process holds the tensor mapped. 3 MB: a
# 4 MiB allocation; 20 MB: 16 MiB more in a second chunk.
head -c 3000000 /dev/urandom > "$T/r"
mkfile "$M/g" "$T/r"
eq "one allocation (a one-descriptor reply)" "0 3000000" "$($G "$SOCKP" r g | head -1)"
id0=$(hid "$M/g")
eq "the first allocation: 4 MiB" 4194304 "$(hsize "$M/g")"
"$TOOL" holdgrow "$M/g" "$T/go1" > "$T/h1.out" 2>&1 &
hp=$!
wait_for grep -q held "$T/h1.out"
check "vmm grow: growth while held past the allocation (truncate)" truncate -s 20000000 "$M/g"
eq "its size" 20000000 "$(stat -c %s "$M/g")"
eq "the handle keeps the first chunk's id" "$id0" "$(hid "$M/g")"
eq "and says the new size (4 + 16 MiB)" 20971520 "$(hsize "$M/g")"
touch "$T/go1"
wait "$hp"
eq "vmm grow: the holder's pointer stays the same" "pointer same" "$(sed -n 2p "$T/h1.out")"
eq "vmm grow: the holder's pointer keeps its bytes" "$(od -An -v -tx1 < "$T/r" | tr -d ' \n')" \
	"$(sed -n 3p "$T/h1.out")"
eq "the holder wrote through it" wrote "$(sed -n 4p "$T/h1.out")"
# Its second open maps the new chunk behind the first, at the same address (the room its
# mapping reserved), and writes the last 8 bytes through it.
eq "vmm grow: the holder's new open maps the grown tensor at its first address" \
	"reopen same 20000000" "$(sed -n 5p "$T/h1.out")"
{ printf '\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a'; tail -c +9 "$T/r"; head -c 16999992 /dev/zero
  printf '\xa5\xa5\xa5\xa5\xa5\xa5\xa5\xa5'; } > "$T/g20"
eq "vmm grow: what the holder writes through its pointer the tensor reads" \
	"$(md5sum < "$T/g20")" "$(md5sum < "$M/g")"
eq "vmm grow: a new open sees the whole size, old bytes then zeros" "$(hexof "$T/g20")" "$(tfsread "$M/g")"
eq "vmm grow: the socket hands out both chunks" "0 20000000 4194304 16777216" "$($G "$SOCKP" r g | head -1)"
eq "a program without libtensorfs maps both (consumer)" "$(md5sum < "$T/g20")" "$(dump "$M/g" | md5sum)"

# 2. a write past the end while held: 2 MiB at 30 MiB, a third chunk (12 MiB)
"$TOOL" hold "$M/g" 300 > "$T/h2.out" 2>&1 &
hp=$!
wait_for grep -q held "$T/h2.out"
head -c 2097152 /dev/urandom > "$T/w2"
check "vmm grow: a write past the end while held grows it" \
	dd if="$T/w2" of="$M/g" bs=1M seek=30 conv=notrunc status=none
{ cat "$T/g20"; head -c $((31457280 - 20000000)) /dev/zero; cat "$T/w2"; } > "$T/g32"
eq "its size" 33554432 "$(stat -c %s "$M/g")"
eq "its bytes: the old ones, zeros, the written" "$(md5sum < "$T/g32")" "$(md5sum < "$M/g")"
eq "three chunks" "0 33554432 4194304 16777216 12582912" "$($G "$SOCKP" r g | head -1)"
eq "and a new process reads them" "$(hexof "$T/g32")" "$(tfsread "$M/g")"

# 3. the bound: 3 chunks now, each growth by 3 MiB adds one; the 14th is refused while held
size=33554432
ok=0
err=
for i in $(seq 20); do
	if truncate -s $((size + 3145728)) "$M/g" 2> "$T/trunc.err"; then
		size=$((size + 3145728)); ok=$((ok + 1))
	else
		err=$(cat "$T/trunc.err"); break
	fi
done
eq "vmm grow: 16 chunks at most, then EBUSY while held" "13 busy" \
	"$ok $(echo "$err" | grep -qi busy && echo busy)"
eq "16 descriptors from the socket (and 16 sizes in its line)" 18 "$($G "$SOCKP" r g | head -1 | wc -w)"
head -c $((size - 33554432)) /dev/zero > "$T/tail0"
cat "$T/g32" "$T/tail0" > "$T/gmax"
eq "the bytes after 13 growths" "$(md5sum < "$T/gmax")" "$(md5sum < "$M/g")"
eq "the consumer maps all 16" "$(md5sum < "$T/gmax")" "$(dump "$M/g" | md5sum)"
kill "$hp"; wait "$hp" 2>/dev/null
cp "$T/gmax" "$T/gmax.keep"

# a second grown tensor, left at two chunks, for the restarts
head -c 5000000 /dev/urandom > "$T/r2"
mkfile "$M/g2" "$T/r2"
truncate -s 9000000 "$M/g2"
{ cat "$T/r2"; head -c 4000000 /dev/zero; } > "$T/g2"
eq "a second tensor grown to two chunks" "0 9000000 6291456 4194304" "$($G "$SOCKP" r g2 | head -1)"

# 4. a packed tensor (up to 1 MiB) grown past 1 MiB while held still moves: EBUSY
head -c 5000 /dev/urandom > "$M/small"
"$TOOL" hold "$M/small" 300 > "$T/h3.out" 2>&1 &
hp=$!
wait_for grep -q held "$T/h3.out"
check_err "vmm grow: a packed tensor grown past 1 MiB while held: EBUSY" "busy" truncate -s 3000000 "$M/small"
kill "$hp"; wait "$hp" 2>/dev/null

# a file copied in by appends (cp: packed, then its own allocation growing by a chunk per
# write past its end, moved to one allocation at 16 chunks, growing again)
head -c 40000000 /dev/urandom > "$T/big"
check "cp of a 40 MB file (growth by appends)" cp "$T/big" "$M/big"
eq "its bytes through the mount" "$(md5sum < "$T/big")" "$(md5sum < "$M/big")"
eq "a new process reads them" "$(hexof "$T/big")" "$(tfsread "$M/big")"
eq "and the consumer" "$(md5sum < "$T/big")" "$(dump "$M/big" | md5sum)"

# 5. the two holders after growths: every chunk of both tensors back (the keeper's copies,
# then the keeper's inventory: LIST links each chunk to its tensor's first)
holders_setup "$M"
hg=$(hexh "$M/g"); hg2=$(hexh "$M/g2")
check "the keeper is replaced after its SIGKILL" kill_keeper "$M"
holders_check "$M" "vmm grow: keeper killed"
eq "vmm grow: keeper killed: every chunk back" \
	"$(md5sum < "$T/gmax") $(md5sum < "$T/g2") $(md5sum < "$T/big")" \
	"$(md5sum < "$M/g") $(md5sum < "$M/g2") $(md5sum < "$M/big")"
eq "a new process reads them after the keeper's SIGKILL" "$(hexof "$T/g2")" "$(tfsread "$M/g2")"
check "the daemon starts again after its SIGKILL" kill_daemon "$M"
holders_check "$M" "vmm grow: daemon killed"
eq "vmm grow: daemon killed: every chunk back" \
	"$(md5sum < "$T/gmax") $(md5sum < "$T/g2") $(md5sum < "$T/big")" \
	"$(md5sum < "$M/g") $(md5sum < "$M/g2") $(md5sum < "$M/big")"
eq "the handles are the same" "$hg $hg2" "$(hexh "$M/g") $(hexh "$M/g2")"
eq "a new process reads them after the daemon's SIGKILL" \
	"$(hexof "$T/gmax") $(hexof "$T/g2") $(hexof "$T/big")" \
	"$(tfsread "$M/g") $(tfsread "$M/g2") $(tfsread "$M/big")"
eq "the socket hands out the adopted chunks" "0 9000000 6291456 4194304" "$($G "$SOCKP" r g2 | head -1)"
eq "and the consumer maps them" "$(md5sum < "$T/g2")" "$(dump "$M/g2" | md5sum)"
check "an adopted tensor grows in place again" truncate -s 12000000 "$M/g2"
eq "three chunks" "0 12000000 6291456 4194304 2097152" "$($G "$SOCKP" r g2 | head -1)"
truncate -s $((size + 3145728)) "$M/g"
cat "$T/gmax" > "$T/gmove"; head -c 3145728 /dev/zero >> "$T/gmove"
eq "vmm grow: unheld past 16 chunks it moves" "0 $((size + 3145728)) $(md5sum < "$T/gmove")" \
	"$($G "$SOCKP" r g | head -1) $(md5sum < "$M/g")"
check "the move gave it a new handle" test "$(hid "$M/g")" != "$id0"

# 6. torch: a DLPack holder's pointer and bytes through a growth in another process
PY=${TFS_PYTHON:-python3}
if "$PY" -c "import torch" 2>/dev/null; then
	head -c 3000000 /dev/urandom > "$T/r3"
	mkfile "$M/d" "$T/r3"
	PYOUT=$(PYTHONPATH=$GROOT/python TENSORFS_LIBRARY=$GROOT/$GBUILD/libtensorfs.so "$PY" - "$M/d" <<'PY' 2>&1
import subprocess, sys, torch, tensorfs
path = sys.argv[1]
t = tensorfs.open(path, "r+")
x = torch.from_dlpack(t)
p0, before = x.data_ptr(), bytes(x.cpu().numpy().tobytes())
subprocess.run(["truncate", "-s", "40000000", path], check=True)
after = bytes(x.cpu().numpy().tobytes())
x[0:4] = torch.tensor([0x5a] * 4, dtype=x.dtype, device=x.device)
torch.cuda.synchronize()
print(p0 == x.data_ptr(), before == after, len(after))
# opened again while x holds it: the whole tensor at x's address; its last 4 bytes a5
t2 = tensorfs.open(path, "r+")
y = torch.from_dlpack(t2)
y[-4:] = torch.tensor([0xa5] * 4, dtype=y.dtype, device=y.device)
torch.cuda.synchronize()
print(p0 == y.data_ptr(), y.numel(), bool((y[:4] == 0x5a).all()))
# grown past the room behind x's mapping (4 MiB and 64 MiB): a new mapping elsewhere
subprocess.run(["truncate", "-s", "100000000", path], check=True)
t3 = tensorfs.open(path, "r")
z = torch.from_dlpack(t3)
print(p0 == z.data_ptr(), z.numel(), bool((z[-60000004:-60000000] == 0xa5).all()),
      int(z[-60000000:].sum()))
del x, y, z
t.close(); t2.close(); t3.close()
PY
)
	eq "vmm grow: torch DLPack holder keeps its pointer and bytes" "True True 3000000" \
		"$(echo "$PYOUT" | sed -n 1p)"
	eq "vmm grow: a torch holder's new open: the whole tensor at the first address" \
		"True 40000000 True" "$(echo "$PYOUT" | sed -n 2p)"
	eq "vmm grow: past the room behind its mapping a new open maps afresh" \
		"False 100000000 True 0" "$(echo "$PYOUT" | sed -n 3p)"
	{ printf '\x5a\x5a\x5a\x5a'; tail -c +5 "$T/r3"; head -c 36999996 /dev/zero
	  printf '\xa5\xa5\xa5\xa5'; head -c 60000000 /dev/zero; } > "$T/d40"
	eq "what the DLPack holder wrote the tensor reads, zeros behind" "$(md5sum < "$T/d40")" "$(md5sum < "$M/d")"
else
	for n in "vmm grow: torch DLPack holder keeps its pointer and bytes" \
		"vmm grow: a torch holder's new open: the whole tensor at the first address" \
		"vmm grow: past the room behind its mapping a new open maps afresh"; do
		echo "skip - $n: $PY has no torch"
	done
fi
kill "$HOLDER"; wait "$HOLDER" 2>/dev/null
fusermount3 -u "$M"
cd /
finish
