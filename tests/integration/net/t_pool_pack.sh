# Host tensors that live in a preallocated pool's segment (--preallocate) or packed into a
# 1 MiB block (-o host_pack) replicate between two daemons in place, as tensors of their
# own do: the owner sends from their place in the segment or block and the puller's UCX
# receives into theirs (fs/net/serve.c, fuse/ops_pull.c, mem/backend.h host_span). The
# bytes are compared, and the stats attribute shows that neither daemon staged a byte
# (net_staged_bytes) and that each moved them all in place (net_inplace_bytes).
. "$(dirname "$0")/netlib.sh"
# Device 0: a pool of 64 MiB (8 MiB segments); device 1: no pool, tensors up to 64 KiB
# packed (the default host_pack).
net_nodes --backend host -o host_devices=2 --preallocate 0:64M
stat_of() { jfield "$(getfattr --only-values -n user.tensorfs.stats "$1" 2>/dev/null)" "$2"; }
mkdir -p "$A/m/pool" "$A/m/pack" "$B/rpack"
setfattr -n user.tensor.device -v 1 "$A/m/pack"
setfattr -n user.tensor.device -v 1 "$B/rpack"
# Two that share a segment, one of two requests (4 MiB each), a small one.
rand_tensor "$A/m/pool/w0" $((3 * 1024 * 1024 + 11))
rand_tensor "$A/m/pool/w1" $((3 * 1024 * 1024 + 4097))
rand_tensor "$A/m/pool/w2" $((6 * 1024 * 1024 + 5))
rand_tensor "$A/m/pool/s" 777
for i in 0 1 2 3; do rand_tensor "$A/m/pack/p$i" $((12288 * i + 1001)); done
total=0
for f in "$A"/m/pool/* "$A"/m/pack/*; do total=$((total + $(size_of "$f"))); done
eq "n1: pool/w1 shares w0's segment" "$(shm_of "$A/m/pool/w0")" "$(shm_of "$A/m/pool/w1")"
check "  at an offset" test "$(xget "$A/m/pool/w1" ipc_offset)" != 0
eq "n1: pack/p1 shares p0's block" "$(shm_of "$A/m/pack/p0")" "$(shm_of "$A/m/pack/p1")"
check "  at an offset" test "$(xget "$A/m/pack/p1" ipc_offset)" != 0
a_in=$(stat_of "$A" net_inplace_bytes) b_in=$(stat_of "$B" net_inplace_bytes)
check "cp -r of n1's pooled tensors into n2's pool" "$CTL" cp -r -q "$B/m/pool" "$B/rpool"
for i in 0 1 2 3; do
	check "cp of n1's packed p$i into a packed tensor of n2" "$CTL" cp -q "$B/m/pack/p$i" "$B/rpack/p$i"
done
# Before anything else reads n1's tensors over the network.
eq "n1 staged nothing" 0 "$(stat_of "$A" net_staged_bytes)"
eq "n2 staged nothing" 0 "$(stat_of "$B" net_staged_bytes)"
eq "n1 sent every byte from its tensors' memory" "$total" $(($(stat_of "$A" net_inplace_bytes) - a_in))
eq "n2 received every byte into its tensors' memory" "$total" $(($(stat_of "$B" net_inplace_bytes) - b_in))
for f in w0 w1 w2 s; do
	check "pool/$f: n2's copy holds n1's bytes" cmp "$T/$f.src" "$B/rpool/$f"
done
for i in 0 1 2 3; do
	check "pack/p$i: n2's copy holds n1's bytes" cmp "$T/p$i.src" "$B/rpack/p$i"
done
eq "n2: rpool/w1 shares w0's segment" "$(shm_of "$B/rpool/w0")" "$(shm_of "$B/rpool/w1")"
check "  at an offset" test "$(xget "$B/rpool/w1" ipc_offset)" != 0
eq "n2: rpack/p1 shares p0's block" "$(shm_of "$B/rpack/p0")" "$(shm_of "$B/rpack/p1")"
check "  at an offset" test "$(xget "$B/rpack/p1" ipc_offset)" != 0
for f in pool/w2 pack/p3; do
	check "n1's sources untouched: $f" cmp "$T/$(basename $f).src" "$A/m/$f"
done
# Reads through n2's mount are answered from the same places.
check "a read of pool/w2 at an offset through n2's mount" \
	cmp <(tail -c +4194000 "$T/w2.src") <(tail -c +4194000 "$B/m/pool/w2")
check "a read of pack/p2 through n2's mount" cmp "$T/p2.src" "$B/m/pack/p2"
eq "n1 still staged nothing" 0 "$(stat_of "$A" net_staged_bytes)"
finish
