# Several daemons on one Redis see one namespace; a restart sweeps the records it left.
. "$(dirname "$0")/lib.sh"
start_redis || exit 1
A=$T/a
B=$T/b
mount_tfs "$A" --node n1 || exit 1
mount_tfs "$B" --node n2 || exit 1
cd "$T"


printf 'ABCDEFGH' > "$A/x"
check "tensor made on n1 is listed on n2" bash -c "ls '$B' | grep -qx x"
eq "n2 sees its size" 8 "$(size_of "$B/x")"
eq "n2 sees its node" n1 "$(xget "$B/x" node)"
# The kernel keeps names and attributes (fs/kcache.c), but a change made on n1 reaches
# n2 through Redis's invalidation messages: a reshape on n1 shows on n2 at once.
touch "$A/z"; eq "n2 sees the empty tensor" 0 "$(size_of "$B/z")"
setfattr -n user.tensor.shape -v '[16]' "$A/z"
# n1 writes its record behind the setfattr (microseconds later): wait for that, then n2
# must see it well within the second its kernel would otherwise keep the old size.
tfs_flush
within() { for _ in $(seq 30); do "$@" >/dev/null 2>&1 && return 0; sleep 0.01; done; return 1; }
z_on_n2_is_16() { test "$(size_of "$B/z")" = 16; }
check "n2 sees a reshape on n1 at once" within z_on_n2_is_16
rm "$A/z"
# libtensorfs remembers metadata between opens while the attributes are unchanged
# (lib/meta_cache.c): a change made on n1 must change them on n2 too (record ctime_ns).
touch "$A/rz"
setfattr -n user.tensor.dtype -v f32 "$A/rz"
setfattr -n user.tensor.shape -v '[2,3]' "$A/rz"
tfs_flush
eq "libtensorfs on n2 sees n1's reshape to the same byte count" "f32 [2,3] 24|f32 [3,2] 24|remembered 0" \
	"$("$HELPERS/tfs_client_tool" reopen "$B/rz" "setfattr -n user.tensor.shape -v '[3,2]' $A/rz && sync $A" 2>&1 |
	  head -3 | cut -d' ' -f1-3 | paste -sd'|')"
eq "libtensorfs on n2 remembers an unchanged tensor of n1" "f32 [3,2] 24|f32 [3,2] 24|remembered 1" \
	"$("$HELPERS/tfs_client_tool" reopen "$B/rz" true 2>&1 | head -3 | cut -d' ' -f1-3 | paste -sd'|')"
rm "$A/rz"
eq "n2 sees its handle" "$(getfattr --only-values -n user.tensor.ipc_handle "$A/x" | od -An -v -tx1)" "$(getfattr --only-values -n user.tensor.ipc_handle "$B/x" | od -An -v -tx1)"
check_err "reading another node's bytes: EREMOTE" "Object is remote" cat "$B/x"
check_err "writing another node's bytes: EREMOTE" "Object is remote" bash -c "printf zz | dd of='$B/x' conv=notrunc status=none"
check_err "reshaping another node's tensor: EREMOTE" "Object is remote" setfattr -n user.tensor.shape -v '[2]' "$B/x"
check_err "removing another node's tensor: EREMOTE" "Object is remote" rm "$B/x"
check "still intact on n1" bash -c "[ \"\$(cat '$A/x')\" = ABCDEFGH ]"
check "mkdir on n2 shows on n1" bash -c "mkdir '$B/shared' && [ -d '$A/shared' ]"
check "tensor in a shared dir made on n2" bash -c "echo hi > '$B/shared/y' && [ \"\$(cat '$B/shared/y')\" = hi ] && [ \$(stat -c %s '$A/shared/y') = 3 ]"
check_err "one name, one tensor: n1 cannot create y too" "File exists" python3 -c "open('$A/shared/y', 'x')"

r=$(qsend '{"op":"create","name":"qn2","dtype":"f16","shape":[8],"node":"n2"}')
check "queue create naming n2 is made by n2" bash -c "echo '$r' | grep -q '\"node\":\"n2\"'"
eq "record node n2" n2 "$(rcli hget tensorfs:tensor:qn2 node)"
eq "n2 reads its bytes" 16 "$(cat "$B/qn2" | wc -c)"
sleep 60 & live=$!
r=$(qsend "{\"op\":\"get\",\"name\":\"qn2\",\"pid\":$live,\"node\":\"n2\"}")
check "get of an n2 tensor answered (forwarded to n2)" bash -c "echo '$r' | grep -q '\"ok\":true'"
eq "n2 counted the holder" 2 "$(rcli hget tensorfs:tensor:qn2 refcount)"
kill $live; wait $live 2>/dev/null

# restart: a daemon killed without unmounting leaves records; its next start removes them
kill -9 "${MNT_PID[$A]}"; wait "${MNT_PID[$A]}" 2>/dev/null
unset "MNT_PID[$A]"
fusermount3 -uz "$A"
eq "records of the dead n1 are still there" 1 "$(rcli exists tensorfs:tensor:x)"
mount_tfs "$A" --node n1 || exit 1
eq "restarted n1 removed its stale record" 0 "$(rcli exists tensorfs:tensor:x)"
check "stale tensor not listed" bash -c "! ls '$A' | grep -qx x"
check "the removal was logged" grep -q "stale record tensorfs:tensor:x" "$T/a.log"
check "n2's tensors untouched" bash -c "[ \"\$(rcli hget tensorfs:tensor:qn2 node)\" = n2 ]"
check "the name is free again" bash -c "echo new > '$A/x' && [ \"\$(cat '$A/x')\" = new ]"

# clean unmount removes this node's records
umount_tfs "$B"
eq "n2's records gone after unmount" "" "$(for k in $(rcli --scan --pattern 'tensorfs:tensor:*'); do rcli hget "$k" node; done | grep n2)"
check "n2's tensors unlisted" bash -c "! ls '$A/shared' | grep -q y"
cd /
finish
