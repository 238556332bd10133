# kill -9 of the daemon loses no tensor (issue 16): its keeper starts it again, and the new
# daemon adopts the memory and the records. 20 tensors of known bytes (small ones and large
# ones, in nested directories), one held through the queue by a live process, one open by a
# live process, one mapped by a live process through its handle.
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
mkdir -p "$M/a/b/c" "$M/w"
names=()
for i in $(seq 0 19); do
	case $((i % 4)) in
	0) f=t$i; n=4096 ;;
	1) f=a/t$i; n=$((1 << 20)) ;;
	2) f=a/b/c/t$i; n=$(( (8 << 20) + i )) ;;
	3) f=w/t$i; n=$((i * 1000 + 1)) ;;
	esac
	head -c "$n" /dev/urandom > "$M/$f"
	names+=("$f")
done
setfattr -n user.tensor.dtype -v f32 "$M/t0"
setfattr -n user.tensor.shape -v "[32,32]" "$M/t0"
chmod 0600 "$M/a/t1"
setfattr -n user.note -v kept "$M/w/t3"
declare -A before
snap() { echo "$(md5sum < "$M/$1" | cut -c1-32) $(stat -c '%i %s %a %u' "$M/$1") $(xget "$M/$1" ipc_handle | md5sum | cut -c1-8) $(xget "$M/$1" ipc_offset) $(xget "$M/$1" dtype) $(xget "$M/$1" shape)"; }
for f in "${names[@]}"; do before[$f]=$(snap "$f"); done
sleep 600 & holder=$!
r=$(qsend "{\"op\":\"get\",\"name\":\"a/t5\",\"pid\":$holder,\"node\":\"n1\"}")
check "a/t5 held through the queue" bash -c "echo '$r' | grep -q '\"ok\":true'"
sleep 600 < "$M/w/t7" & opener=$!
# A process that maps t2's memory through its handle and keeps it: after the crash it
# checks the bytes and writes through its mapping.
if [ "$MEM_MODE" = vmm ]; then
	# A VMM tensor's handle grants nothing: the Python package maps it (descriptor from the
	# handle socket), the way a framework would.
	target="$M/a/b/c/t2"
	export PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH} TENSORFS_LIBRARY=$ROOT/$BUILD/libtensorfs.so
elif [ "$BACKEND" = cuda ]; then
	target="$(_map_hex "$M/a/b/c/t2") $(xget "$M/a/b/c/t2" ipc_offset)"
else
	target="/dev/shm$(xget "$M/a/b/c/t2" ipc_handle | tail -c +9 | tr -d '\0')"
fi
python3 - "$BACKEND$([ "$MEM_MODE" = vmm ] && echo -vmm)" "$T/mapped" $target <<'PY' & mapper=$!
import ctypes, os, sys, time
backend, out = sys.argv[1], sys.argv[2]
if backend == "cuda-vmm":
    import tensorfs
    t = tensorfs.open(sys.argv[3], "r+")
    read = lambda: t.read(0, 64)
    write = lambda data: t.write(data, 0)
elif backend == "cuda":
    import cupy
    rt = cupy.cuda.runtime
    ptr = rt.ipcOpenMemHandle(bytes.fromhex(sys.argv[3])) + int(sys.argv[4])
    def read():
        b = ctypes.create_string_buffer(64)
        rt.memcpy(ctypes.addressof(b), ptr, 64, rt.memcpyDeviceToHost)
        return b.raw
    def write(data):
        b = ctypes.create_string_buffer(data, len(data))
        rt.memcpy(ptr, ctypes.addressof(b), len(data), rt.memcpyHostToDevice)
        rt.deviceSynchronize()
else:
    import mmap
    fd = os.open(sys.argv[3], os.O_RDWR)
    m = mmap.mmap(fd, os.fstat(fd).st_size)
    read = lambda: bytes(m[:64])
    def write(data):
        m[0:len(data)] = data
first = read()
open(out + ".ready", "w").close()
while not os.path.exists(out + ".go"):
    time.sleep(0.02)
ok = read() == first
write(b"KEPT")
open(out, "w").write("same" if ok else "changed")
PY
for _ in $(seq 600); do [ -e "$T/mapped.ready" ] && break; sleep 0.05; done
sync "$M"
d=$(daemon_pid "$M")
check "the daemon is a child of its keeper" test -n "$d"
kill -9 "$d"
check "the mount serves again (within 30 s)" serves_within 30 "$M"
d2=$(daemon_pid "$M")
check "a new daemon ($d2, was $d)" test -n "$d2" -a "$d2" != "$d"
same=0
for f in "${names[@]}"; do
	a=$(snap "$f")
	if [ "$a" = "${before[$f]}" ]; then same=$((same + 1)); else echo "    # $f: ${before[$f]} -> $a"; fi
done
eq "every tensor has its bytes, inode, size, mode, owner, handle, offset, dtype and shape" 20 "$same"
eq "a user attribute survives" kept "$(getfattr --only-values -n user.note "$M/w/t3")"
touch "$T/mapped.go"
wait "$mapper"
eq "the mapping process noticed nothing" same "$(cat "$T/mapped")"
eq "what it wrote through its mapping is what the file reads" KEPT "$(head -c 4 "$M/a/b/c/t2")"
eq "a new process maps the handle and reads the bytes" "$(md5sum < "$M/t4")" "$(map_dump "$M/t4" | md5sum)"
eq "the queue hold still counts" 2 "$(xget "$M/a/t5" refcount)"
eq "the open of the dead mount does not" 1 "$(xget "$M/w/t7" refcount)"
bad=0
for f in "${names[@]}"; do
	[ "$(xget "$M/$f" refcount)" = "$(rcli hget "tensorfs:tensor:$f" refcount)" ] || bad=$((bad + 1))
done
eq "Redis refcount fields equal the daemon's counts" 0 "$bad"
check "the adoption was logged" grep -q "adopted 20 tensor(s)" "$T/m.log"
kill "$opener" "$holder"; wait "$opener" "$holder" 2>/dev/null
rm -rf "$M/a" "$M/w" "$M"/t*
zero() { [ "$(used_bytes "$M")" = 0 ]; }
check "statfs returns to 0 once everything is removed and the holder is gone" soon zero
keeper=${MNT_PID[$M]}
# Empty blocks of packed tensors go a second or two after the last (docs/handles.md).
soon test -z "$(ls /dev/shm | grep "^tensorfs\.$keeper\." || true)"
eq "no shared-memory object of the keeper left" "" "$(ls /dev/shm | grep "^tensorfs\.$keeper\." || true)"
eq "no tensor records left" "" "$(rcli --scan --pattern 'tensorfs:tensor:*'; rcli --scan --pattern 'tensorfs:unlinked:*')"
umount_tfs "$M"
check "the keeper exits with the daemon" bash -c "! kill -0 $keeper 2>/dev/null"
finish
