# The client library (libtensorfs, SPEC §9): open by path, the handle cache, direct copies,
# the Redis queue path, DLPack, the examples, bad input, and the installed pkg-config file.
. "$(dirname "$0")/lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --backend host --max-bytes 64M || exit 1
cd "$T"
TOOL="$HELPERS/tfs_client_tool"
EX="$ROOT/$BUILD/examples"
# out CMD...: its stdout (and stderr), whatever the exit status
out() { "$@" 2>&1; true; }
# TFS_VALGRIND=1 (tests/run.sh's valgrind pass, plain build): the client programs below run
# under tests/valgrind.sh (the daemon does not: ASan checks it). Each run logs to its own
# file in $VG; the checks see the programs' own output and exit status, and "valgrind: ..."
# at the end fails on any non-empty log (an error path that leaks still prints its error).
VG=
if [ "${TFS_VALGRIND:-0}" = 1 ]; then
	VG=$T/vg
	mkdir -p "$VG/bin"
	for p in "$TOOL" "$EX/open_by_path" "$EX/queue_lifecycle"; do
		printf '#!/bin/sh\nVG_LOG=%s exec %s %s "$@"\n' "$VG" "$ROOT/tests/valgrind.sh" "$p" \
			> "$VG/bin/${p##*/}"
		chmod +x "$VG/bin/${p##*/}"
	done
	TOOL=$VG/bin/tfs_client_tool
	EX=$VG/bin
fi

touch "$M/a"
setfattr -n user.tensor.dtype -v f32 "$M/a"
setfattr -n user.tensor.shape -v '[2,3]' "$M/a"

# --- open by path ---
eq "open by path: dtype, shape, bytes, backend" "f32 [2,3] 24 host ro" "$(out "$TOOL" info "$M/a" | head -1)"
check "write through the mapping" "$TOOL" write "$M/a" 4 0102030405
eq "FUSE read sees the direct write" "00000000 01020304 05000000" \
	"$(od -An -v -tx4 --endian=big -N12 "$M/a" | xargs)"
printf '\xaa\xbb' | dd of="$M/a" bs=1 seek=20 conv=notrunc status=none
eq "direct read sees a FUSE write" "aabb0000" "$(out "$TOOL" read "$M/a" 20 4 | head -1)"
check "fill through the pointer" "$TOOL" fill "$M/a" 0x7f
eq "FUSE read sees the pointer writes" "7f7f7f7f" "$(od -An -v -tx1 -N4 "$M/a" | tr -d ' ')"
check_err "range past the end: EINVAL" "error: EINVAL" "$TOOL" read "$M/a" 20 8
check_err "write to a read-only open: EBADF" "error: EBADF" "$TOOL" write-ro "$M/a"

check "host: mark written is a fence" "$TOOL" mark "$M/a"
check "host: wait written is a fence" "$TOOL" wait "$M/a"

# --- the descriptor is the reference ---
"$TOOL" hold "$M/a" 3 > "$T/hold.out" &
hp=$!
for _ in $(seq 50); do grep -q held "$T/hold.out" 2>/dev/null && break; sleep 0.05; done
eq "an open tensor counts one reference" 2 "$(rcli hget tensorfs:tensor:a refcount)"
kill $hp; wait $hp 2>/dev/null
for _ in $(seq 50); do [ "$(rcli hget tensorfs:tensor:a refcount)" = 1 ] && break; sleep 0.05; done
eq "a killed holder's reference is gone" 1 "$(rcli hget tensorfs:tensor:a refcount)"
eq "close releases the reference" 1 "$("$TOOL" info "$M/a" >/dev/null; rcli hget tensorfs:tensor:a refcount)"

# --- metadata remembered between opens (lib/meta_cache.c): every change still shows ---
touch "$M/re"
setfattr -n user.tensor.dtype -v f32 "$M/re"
setfattr -n user.tensor.shape -v '[2,3]' "$M/re"
reopen() { out "$TOOL" reopen "$1" "$2" | head -3 | paste -sd'|'; }
eq "reopen: a reshape to the same byte count shows" "f32 [2,3] 24 host ro|f32 [3,2] 24 host ro|remembered 0" \
	"$(reopen "$M/re" "setfattr -n user.tensor.shape -v '[3,2]' $M/re")"
eq "reopen: a dtype of the same size shows" "f32 [3,2] 24 host ro|i32 [3,2] 24 host ro|remembered 0" \
	"$(reopen "$M/re" "setfattr -n user.tensor.dtype -v i32 $M/re")"
eq "reopen: a write that grows the tensor shows" "i32 [3,2] 24 host ro|i32 [7] 28 host ro|remembered 0" \
	"$(reopen "$M/re" "printf abcd >> $M/re")"
eq "reopen: a new tensor under the same name shows" "i32 [7] 28 host ro|u8 [5] 5 host ro|remembered 0" \
	"$(reopen "$M/re" "rm $M/re && printf 12345 > $M/re")"
eq "reopen: a tensor renamed onto the name shows" "u8 [5] 5 host ro|u8 [3] 3 host ro|remembered 0" \
	"$(reopen "$M/re" "printf xyz > $M/re2 && mv $M/re2 $M/re")"
eq "reopen: unchanged, the metadata is remembered" "u8 [3] 3 host ro|u8 [3] 3 host ro|remembered 1" "$(reopen "$M/re" true)"
rm -f "$M/re"

# --- per-process cache ---
printf 'xyz' > "$M/b"
eq "one mapping per handle, two handles, none after close" "2 0" "$(out "$TOOL" cache "$M/a" "$M/a" "$M/b" | head -2 | xargs)"

# --- unlinked between open and map: the descriptor keeps it alive ---
printf 'hello' > "$M/u"
eq "unlinked after open still maps and copies" "u8 [5] 5 host rw 2a" \
	"$(out "$TOOL" unlinked "$M/u" | head -2 | xargs)"
check "the unlinked tensor left the directory" test ! -e "$M/u"
for _ in $(seq 50); do [ "$(rcli exists tensorfs:tensor:u)" = 0 ] && break; sleep 0.05; done
eq "its record is gone after the close" 0 "$(rcli exists tensorfs:tensor:u)"

# --- DLPack ---
eq "DLPack export: CPU device, f32, 2 dims; deleter unmaps" \
	"device 1 code 2 bits 32 ndim 2 first 127 cache 1 cache 0 done" \
	"$(out "$TOOL" dlpack "$M/a" | xargs)"

# --- the Redis queue path ---
export TFS_NODE=n1
check "queue create" "$TOOL" qcreate "$URL" q1 i32 '[4]'
eq "created tensor appears in the mount" 16 "$(size_of "$M/q1")"
check_err "create again: EEXIST" "error: EEXIST" "$TOOL" qcreate "$URL" q1 i32 '[4]'
"$TOOL" write "$M/q1" 0 0a000000 >/dev/null
"$TOOL" qget "$URL" q1 3 > "$T/qget.out" &
gp=$!
for _ in $(seq 60); do grep -q i32 "$T/qget.out" 2>/dev/null && break; sleep 0.05; done
eq "get: same tensor as open by path" "$(out "$TOOL" info "$M/q1" | head -1 | cut -d' ' -f1-4)" \
	"$(head -1 "$T/qget.out" | cut -d' ' -f1-4)"
eq "get records this process as a holder" 1 "$(rcli hget tensorfs:tensor:q1 holder:n1:$gp)"
eq "get raises the refcount" 2 "$(rcli hget tensorfs:tensor:q1 refcount)"
wait $gp
for _ in $(seq 40); do [ "$(rcli hget tensorfs:tensor:q1 refcount)" = 1 ] && break; sleep 0.1; done
eq "the exited holder is reaped" 1 "$(rcli hget tensorfs:tensor:q1 refcount)"
eq "get, read directly, delete releases the hold" "i32 [4] 16 host rw 0a00000000000000 done" \
	"$(out "$TOOL" qgetdel "$URL" q1 | xargs)"
eq "refcount back to 1" 1 "$(rcli hget tensorfs:tensor:q1 refcount)"
check "delete drops the name" "$TOOL" qdelete "$URL" q1
check "the tensor is gone" test ! -e "$M/q1"
check_err "get of a missing tensor: ENOENT" "error: ENOENT" "$TOOL" qget "$URL" q1
check_err "bad name: EINVAL" "error: EINVAL" "$TOOL" qget "$URL" ../x
check_err "a queue nobody serves: ETIMEDOUT, clear message" "no reply on .* within 500 ms" \
	env TFS_QUEUE=nobody_serves TFS_TIMEOUT_MS=500 "$TOOL" qget "$URL" q1
rcli del nobody_serves >/dev/null
PW=$T/pw.sock
redis-server --port 0 --unixsocket "$PW" --requirepass s3cret --save "" --appendonly no \
	--dir "$T" --daemonize no >/dev/null 2>&1 3<&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&- &
pwpid=$!
for _ in $(seq 100); do [ -S "$PW" ] && break; sleep 0.05; done
check_err "Redis refuses the password: EACCES" "error: EACCES: Redis refused the password" \
	"$TOOL" qconnect "unix://:wrong@$PW" x
check "the right password connects" "$TOOL" qconnect "unix://:s3cret@$PW" x
kill $pwpid; wait $pwpid 2>/dev/null
check_err "no Redis there: ENOENT" "error: ENOENT" "$TOOL" qconnect "unix://$T/none.sock" x

# --- bad input ---
echo data > "$T/plain"
check_err "a path outside a tensorfs mount: ENOTSUP" "error: E[A-Z]*NOTSUPP*: .*not on a tensorfs mount" \
	"$TOOL" info "$T/plain"
if setfattr -n user.tensor.meta -v '{"dtype":"f32",' "$T/plain" 2>/dev/null; then
	check_err "malformed user.tensor.meta: EBADMSG" "error: EBADMSG" "$TOOL" info "$T/plain"
else
	echo "skip - malformed meta on a file: $T does not take user xattrs"
fi
echo '{"dtype":"f32","shape_text":"[2]"' > "$T/bad.json"
check_err "malformed metadata JSON: EBADMSG" "error: EBADMSG" "$TOOL" open-meta "$T/bad.json"
check_err "a directory: EISDIR" "error: EISDIR" "$TOOL" info "$M"
touch "$M/empty"
eq "an empty tensor opens with no memory" "u8 [0] 0 host ro" "$(out "$TOOL" info "$M/empty" | head -1)"
# A handle from a dead daemon: keep the metadata, stop the daemon, then map it.
D=$T/d
mount_tfs "$D" --node n9 --prefix dead --queue dead_q --backend host || exit 1
printf 'gone' > "$D/g"
getfattr --absolute-names --only-values -n user.tensor.meta "$D/g" > "$T/g.json"
eq "metadata of a live daemon maps" "u8 [4] 4 host rw" "$(out "$TOOL" open-meta "$T/g.json" | head -1)"
umount_tfs "$D"
check_err "a handle from a dead daemon: ESTALE" "error: ESTALE: .*no longer exists" \
	"$TOOL" open-meta "$T/g.json"

# Metadata read, then the tensor removed before the map: nothing holds the memory.
printf 'bye' > "$M/v"
getfattr --absolute-names --only-values -n user.tensor.meta "$M/v" > "$T/v.json"
rm "$M/v"
check_err "a tensor freed between reading its metadata and mapping: ESTALE" "error: ESTALE" \
	"$TOOL" open-meta "$T/v.json"

# run_py PATH: examples/dlpack_torch.py prints its own "skip - ..." (host backend, no
# CuPy/PyTorch/GPU) or runs and must exit 0.
run_py() {
	local o rc
	command -v python3 >/dev/null || { echo "skip - dlpack_torch.py: no python3"; return; }
	o=$(python3 "$ROOT/examples/dlpack_torch.py" "$1" 2>&1); rc=$?
	case "$o" in
	"skip - "*) echo "$o" ;;
	*) if [ $rc -eq 0 ]; then ok "examples/dlpack_torch.py: $o"; else nok "examples/dlpack_torch.py: $o"; fi ;;
	esac
}

# --- the cuda backend, where there is a GPU (the lead's GPU machine) ---
if [ -n "$VG" ]; then
	echo "skip - cuda backend checks under valgrind: the valgrind pass checks the host backend"
elif nvidia-smi -L >/dev/null 2>&1; then
	G=$T/g
	mount_tfs "$G" --node n1 --backend cuda --prefix gpu --queue gpu_q || exit 1
	touch "$G/c"; setfattr -n user.tensor.dtype -v f32 "$G/c"; setfattr -n user.tensor.shape -v '[256,256]' "$G/c"
	eq "cuda: open by path" "f32 [256,256] 262144 cuda ro" "$(out "$TOOL" info "$G/c" | head -1)"
	check "cuda: direct write (cudaMemcpy)" "$TOOL" write "$G/c" 8 0102030405
	eq "cuda: FUSE read sees it" "00000000000000000102030405000000" "$(od -An -v -tx1 -N16 "$G/c" | tr -d ' \n')"
	printf '\xaa\xbb' | dd of="$G/c" bs=1 seek=100 conv=notrunc status=none
	eq "cuda: direct read sees a FUSE write" "aabb00" "$(out "$TOOL" read "$G/c" 100 3 | head -1)"
	printf 'abc' > "$G/p1"; printf 'defg' > "$G/p2"
	eq "cuda: cache opens each handle once, closes all" "0" "$(out "$TOOL" cache "$G/p1" "$G/p1" "$G/p2" | sed -n 2p)"
	eq "cuda: pooled tensors read right" "616263 64656667" "$(out "$TOOL" read "$G/p1" 0 3 | head -1) $(out "$TOOL" read "$G/p2" 0 4 | head -1)"
	eq "cuda: DLPack on kDLCUDA" "device 2 code 2 bits 32 ndim 2" "$(out "$TOOL" dlpack "$G/c" | head -1 | cut -d' ' -f1-8)"
	"$TOOL" mark "$G/c" > "$T/mark.out" 2>&1
	eq "cuda: mark written stores the event handle" 64 "$(getfattr --absolute-names --only-values -n user.tensorfs.event "$G/c" | wc -c)"
	check "cuda: another process waits on it" "$TOOL" wait "$G/c"
	check "cuda: examples/open_by_path" "$EX/open_by_path" "$G/p1"
	eq "cuda: open_by_path added 1" "626364" "$(od -An -tx1 "$G/p1" | tr -d ' ')"
	check "cuda: queue create/get/delete" env TFS_QUEUE=gpu_q "$EX/queue_lifecycle" "$URL" gq
	run_py "$G/c"
	umount_tfs "$G"
else
	echo "skip - cuda backend checks: no GPU here"
fi

# --- examples ---
printf '\x01\x02\x03' > "$M/ex"
check "examples/open_by_path" "$EX/open_by_path" "$M/ex"
eq "open_by_path added 1 to each byte" "020304" "$(od -An -tx1 "$M/ex" | tr -d ' ')"
check "examples/queue_lifecycle" "$EX/queue_lifecycle" "$URL" exq
check "queue_lifecycle left nothing" bash -c "[ ! -e '$M/exq' ] && [ \"\$(rcli exists tensorfs:tensor:exq)\" = 0 ]"
check "examples/tensors.sh" bash "$ROOT/examples/tensors.sh" "$M"
touch "$M/py"; setfattr -n user.tensor.shape -v '[8]' "$M/py"
run_py "$M/py"

# --- make install + pkg-config (plain build only: the ASan library needs ASan programs) ---
if [[ "$BUILD" == *asan* ]]; then
	echo "skip - install test under $BUILD"
elif [ -n "$VG" ]; then
	echo "skip - install test under valgrind: the plain pass runs it"
else
	I=$T/inst
	# -o all: install what this build folder holds, without rebuilding it here.
	if make -s -C "$ROOT" -o all install O="$BUILD" DESTDIR="$I" PREFIX=/opt/tfs >"$T/install.out" 2>&1; then
		L=$I/opt/tfs/lib
		check "installed header, libraries and tensorfs.pc" test -f "$I/opt/tfs/include/tensorfs.h" \
			-a -f "$L/libtensorfs.a" -a -L "$L/libtensorfs.so" -a -f "$L/pkgconfig/tensorfs.pc"
		export PKG_CONFIG_PATH="$L/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
		# A sysroot (the GPU machine's package root sets one) would be prefixed to our paths.
		pc="env -u PKG_CONFIG_SYSROOT_DIR pkg-config --define-variable=prefix=$I/opt/tfs"
		check "a program builds against the installed tensorfs.pc" \
			bash -c "cc -o '$T/obp' '$ROOT/examples/open_by_path.c' \$($pc --cflags --libs tensorfs)"
		check "and runs with the installed libtensorfs.so" env LD_LIBRARY_PATH="$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$T/obp" "$M/ex"
		check "and against the installed libtensorfs.a (pkg-config --static)" \
			bash -c "cc -o '$T/qlc' '$ROOT/examples/queue_lifecycle.c' \$($pc --cflags tensorfs) '$L/libtensorfs.a' \$($pc --static --libs-only-l tensorfs | sed 's/-ltensorfs//') && '$T/qlc' '$URL' st1"
	else
		nok "make install DESTDIR=$I"; sed 's/^/      /' "$T/install.out" | tail -5
	fi
fi
if [ -n "$VG" ]; then
	runs=$(find "$VG" -maxdepth 1 -name '*.log' | wc -l)
	bad=$(find "$VG" -maxdepth 1 -name '*.log' -size +0 | sort)
	if [ -z "$bad" ] && [ "$runs" -gt 0 ]; then
		ok "valgrind: $runs client runs, no memory errors, nothing definitely or indirectly lost"
	else
		nok "valgrind: $(echo "$bad" | grep -c .) of $runs client runs reported errors or leaks"
		for f in $bad; do echo "      $f:"; sed 's/^/        /' "$f" | head -40; done
	fi
fi
cd /
finish
