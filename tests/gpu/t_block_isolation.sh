# A CUDA IPC handle maps its whole cudaMalloc block, so a handle must never reach bytes its
# reader could not read through the mount (issue 15 item 9). Two 0644 tensors of root, one
# in a 0700 directory, one in a public one: their handles differ, and uid 65534, given the
# public handle, finds the private tensor's bytes at no offset of the block it maps. A
# rename into the private directory takes a tensor out of the public block; a restart of
# the daemon (kill -9: the keeper restarts it) puts the blocks back under the same keys.
# In --memory vmm the same holds of the VMM allocations small tensors are packed into: the
# handle socket hands the whole allocation to whoever may read one tensor of it.
EXPECT_RESTARTS=1     # it kills the daemon once
. "$(dirname "$0")/gpulib.sh"
gpu_tests "tensors of a private and a public directory have different handles" \
	"uid 65534 with the public handle reads none of the private tensor's bytes" \
	"a rename into the private directory moves the tensor out of the public block" \
	"a held tensor that shares its block is not moved to another directory" \
	"after a restart a new public tensor shares the public block again"
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 --allow-other || exit 1
cd "$T"
chmod 755 "$T"
BLOCK=2097152        # the pool's small blocks (fs/mem/pool.h): what a small tensor's handle maps
# marker N: 3000 bytes no zeroed or public block holds, N a digit
marker() { python3 -c "import sys; sys.stdout.buffer.write((b'SECRET-%s-' % sys.argv[1].encode()) * 300)" "$1"; }
for i in 1 2 3; do marker $i > "$T/m$i"; done
mkdir -m 755 "$M/pub"; mkdir -m 700 "$M/priv"
head -c 3000 /dev/zero | tr '\0' 'p' > "$M/pub/x"
cp "$T/m1" "$M/priv/secret"
cp "$T/m2" "$M/pub/moving"
chmod 644 "$M/pub/x" "$M/priv/secret" "$M/pub/moving"
hp=$(hexh "$M/pub/x"); hs=$(hexh "$M/priv/secret")
check "tensors of a private and a public directory have different handles" test "$hp" != "$hs"
eq "one directory's small tensors share a block" "$hp" "$(hexh "$M/pub/moving")"
# as uid 65534: the whole block behind the public handle, read through CUDA IPC
as_nobody() { python3 -c "
import os, sys
os.setgroups([]); os.setgid(65534); os.setuid(65534)
os.execv(sys.argv[1], sys.argv[1:])
" "$@"; }
# nobody_dump FILE OUT: the whole block of FILE's handle, as uid 65534 maps it (a VMM block:
# the descriptor the handle socket gives for FILE, --memory vmm)
nobody_dump() { as_nobody "$CONSUMER" dump "$(cons_handle "$1")" 0 "$BLOCK" 0 > "$2"; }
check "uid 65534 cannot read the private tensor through the mount" \
	not as_nobody /bin/cat "$M/priv/secret"
check "uid 65534 maps the whole public block" nobody_dump "$M/pub/x" "$T/pub.bin"
eq "the block it maps is $BLOCK bytes" "$BLOCK" "$(stat -c %s "$T/pub.bin")"
check "uid 65534 with the public handle reads none of the private tensor's bytes" \
	not grep -q SECRET-1 "$T/pub.bin"
check "(the public neighbour's bytes are there: the scan can see)" grep -q SECRET-2 "$T/pub.bin"

# rename into the private directory: the tensor leaves the public block
check "rename pub/moving into the private directory" mv "$M/pub/moving" "$M/priv/moving"
check "a rename into the private directory moves the tensor out of the public block" \
	test "$(hexh "$M/priv/moving")" != "$hp"
check "its bytes survive the move (file and handle)" \
	bash -c "cmp '$T/m2' '$M/priv/moving' && dump '$M/priv/moving' | cmp - '$T/m2'"
# the chunk it left is zeroed by the daemon's zeroing thread, soon after
gone_from_pub() { nobody_dump "$M/pub/x" "$T/pub2.bin" && ! grep -q SECRET-2 "$T/pub2.bin"; }
check "the public block, mapped again, soon holds none of it" wait_for gone_from_pub
eq "the record names the new directory" "$(rcli hget tensorfs:dir:priv ino)" \
	"$(rcli hget tensorfs:tensor:priv/moving dir)"

# a tensor another process holds open and maps is not moved under it: EBUSY
cp "$T/m2" "$M/pub/held"
: > "$T/hold.out"
"$CONSUMER" hold "$(cons_handle "$M/pub/held")" "$(xget "$M/pub/held" ipc_offset)" 16 0 \
	< "$M/pub/held" > "$T/hold.out" 2>&1 &
c=$!
wait_for grep -q holding "$T/hold.out"
check_err "a held tensor that shares its block is not moved to another directory" \
	"busy" mv "$M/pub/held" "$M/priv/held"
check "it is still where it was, in the public block" \
	bash -c "cmp '$T/m2' '$M/pub/held' && test \"\$(hexh '$M/pub/held')\" = '$hp'"
kill "$c"; wait "$c" 2>/dev/null
check "once let go, it moves" mv "$M/pub/held" "$M/priv/held"

# restart: the keeper keeps the blocks, the new daemon adopts them under the same keys
d=$(daemon_pid "$M")
kill -9 "$d"
restarted() { local p; p=$(daemon_pid "$M"); [ -n "$p" ] && [ "$p" != "$d" ]; }
for _ in $(seq 200); do restarted && break; sleep 0.05; done
serves_within 20 "$M"
check "the daemon serves again" stat "$M/pub/x"
check "the private tensor survived the restart" cmp "$T/m1" "$M/priv/secret"
head -c 3000 /dev/zero | tr '\0' 'q' > "$M/pub/y"
eq "after a restart a new public tensor shares the public block again" "$hp" "$(hexh "$M/pub/y")"
cp "$T/m3" "$M/priv/z"
check "and a new private one does not" test "$(hexh "$M/priv/z")" != "$hp"
rm -rf "$M/pub" "$M/priv"
cd /
finish
