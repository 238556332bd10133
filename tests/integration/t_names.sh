# The kernel keeps the names it looked up (fs/kcache.c): an open of a known name is one
# FUSE request, not two, and what changes a name or a tensor without passing through this
# kernel (another node, this node's queue) still shows at once.
. "$(dirname "$0")/lib.sh"
start_redis || exit 1
A=$T/a
B=$T/b
C=$T/c
mount_tfs "$A" --node n1 --debug || exit 1
mount_tfs "$B" --node n2 || exit 1
mount_tfs "$C" --node n3 --debug -o entry_timeout=0 || exit 1
cd "$T"

# lookups_since LOG LINE NAME: LOOKUPs of /NAME in a --debug log after line LINE (the
# daemon logs each one it serves; libfuse's own lines do not name the path).
lookups_since() { tail -n +"$(($2 + 1))" "$1" | grep -c ": LOOKUP /$3\$"; }
# within CMD...: CMD succeeds within 0.3 s. Another node's change reaches this one through
# Redis's invalidation messages, a few µs behind Redis itself; 0.3 s is well short of the
# second after which the kernel would ask again anyway (entry and attribute timeouts).
within() { for _ in $(seq 30); do "$@" >/dev/null 2>&1 && return 0; sleep 0.01; done; return 1; }

printf 'ABCD' > "$A/x"
n=$(wc -l < "$T/a.log")
for _ in $(seq 10); do cat "$A/x" > /dev/null; done
eq "10 opens of a known name: no LOOKUP" 0 "$(lookups_since "$T/a.log" "$n" x)"
eq "10 opens of a known name: 10 OPENs" 10 "$(tail -n +"$((n + 1))" "$T/a.log" | grep -c "opcode: OPEN ")"
n=$(wc -l < "$T/c.log")
for _ in $(seq 10); do : < "$C/x"; done
check "with -o entry_timeout=0 each open looks the name up" \
	test "$(lookups_since "$T/c.log" "$n" x)" -ge 10

# Another node removes a name this kernel knows.
printf 'abcd' > "$A/y"
eq "n2 knows n1's tensor y" 4 "$(size_of "$B/y")"
rm "$A/y"; tfs_flush
check "n1 removes it: stat on n2 fails" within bash -c "! stat '$B/y'"
check_err "n1 removes it: open on n2 fails with ENOENT" "No such file" cat "$B/y"
check "a name n2 still knew is created afresh on n2 (O_CREAT)" bash -c "echo new > '$B/y'"
eq "the new y is n2's" n2 "$(xget "$B/y" node)"
eq "n1 sees n2's y" 4 "$(size_of "$A/y")"
rm "$B/y"

# Another node replaces a tensor under a name this kernel knows.
printf '1234' > "$A/z"
eq "n2 knows z, 4 bytes" 4 "$(size_of "$B/z")"
rm "$A/z"; printf '12345678' > "$A/z"; tfs_flush
check "n1 replaces z with 8 bytes: n2 sees 8" within test "$(size_of "$B/z")" = 8
eq "and its new node" n1 "$(xget "$B/z" node)"
# libtensorfs on n2 remembers z's metadata by its attributes (lib/meta_cache.c): they
# must change when the tensor under the name does.
touch "$A/rz"
setfattr -n user.tensor.dtype -v f32 "$A/rz"
setfattr -n user.tensor.shape -v '[2,3]' "$A/rz"
tfs_flush
eq "libtensorfs on n2 sees n1 replace a tensor by one of the same size" \
	"f32 [2,3] 24|i32 [6] 24|remembered 0" \
	"$("$HELPERS/tfs_client_tool" reopen "$B/rz" "rm $A/rz && touch $A/rz && setfattr -n user.tensor.dtype -v i32 $A/rz && setfattr -n user.tensor.shape -v '[6]' $A/rz && sync $A && sleep 0.05" 2>&1 |
	  head -3 | cut -d' ' -f1-3 | paste -sd'|')"
rm "$A/rz"

# This node's queue changes names without a FUSE request.
r=$(qsend '{"op":"create","name":"q","dtype":"f32","shape":[4],"node":"n1"}')
eq "queue create: the mount shows it" 16 "$(size_of "$A/q")"
r=$(qsend '{"op":"delete","name":"q","node":"n1"}')
check "queue delete: stat fails at once" bash -c "! stat '$A/q'"
r=$(qsend '{"op":"create","name":"q","dtype":"f32","shape":[8],"node":"n1"}')
eq "queue create again, bigger: the mount shows the new size at once" 32 "$(size_of "$A/q")"
r=$(qsend '{"op":"delete","name":"q","node":"n1"}')
check "touch after a queue delete creates the tensor" touch "$A/q"
eq "an empty one" 0 "$(size_of "$A/q")"
rm "$A/q"

# A reshape through this kernel changes the size the kernel would otherwise keep.
touch "$A/s"; size_of "$A/s" > /dev/null
setfattr -n user.tensor.shape -v '[32]' "$A/s"
eq "reshape through the mount: stat sees the new size" 32 "$(size_of "$A/s")"
rm "$A/s" "$A/x"

# libtensorfs: a tensor the process holds open already is opened again without a FUSE
# request (lib/fd_share.c), unless it changed.
printf '0123' > "$A/h"
n=$(wc -l < "$T/a.log")
eq "tfs_open of a held tensor shares its descriptor; read-write opens apart" "u8 [4] 4 host ro|shared 1|shared 1|done" \
	"$("$HELPERS/tfs_client_tool" share "$A/h" true 2>&1 | sed 's/ cuda / host /' | paste -sd'|')"
eq "so the daemon saw two OPENs, not three" 2 "$(tail -n +"$((n + 1))" "$T/a.log" | grep -c "opcode: OPEN ")"
eq "a held tensor that another node replaced is opened anew" "u8 [8] 8 host ro|shared 0|shared 0|done" \
	"$("$HELPERS/tfs_client_tool" share "$B/h" "rm $A/h && printf 01234567 > $A/h && sync $A && sleep 0.05" 2>&1 |
	  sed 's/ cuda / host /' | paste -sd'|')"
rm "$A/h"

# --page-cache keeps no names: the queue could not drop them under the namespace lock.
D=$T/d
mount_tfs "$D" --node n4 --page-cache || exit 1
check "--page-cache: names not kept" grep -q "names cached by the kernel for 0 s" "$T/d.log"
check "the default keeps them" grep -q "names cached by the kernel for 1 s" "$T/a.log"
finish
