# A pooled host tensor (--preallocate) whose memory UCX still sends from, the requester
# stopped mid-replication, is given another mode (chmod), which moves it to a segment of
# its new key: the chmod succeeds, the tensor's bytes are whole at its new place, its old
# chunk stays allocated (not handed to another tensor) while UCX still holds it, the
# owner's mount goes on, and once the requester came back and gave up, every byte of the
# pool is free again after the tensors are removed (mem/backend.h host_span, set_owner).
. "$(dirname "$0")/netlib.sh"
# 128 MiB segments (1 GiB / 8); w, of 256 MiB, takes a run of two. One tensor: whenever
# the owner has an answer in flight, it is w's, so w is lent when the requester stops.
net_nodes --backend host --preallocate 0:1G -o net_timeout=2
mkdir "$A/m"
rand_tensor "$A/m/w" $((256 * 1024 * 1024))
da=$(daemon_pid "$A") db=$(daemon_pid "$B")
"$CTL" cp -r -q "$B/m" "$B/r" 2>"$T/cp.err" &
cpid=$!
# Stopped once the owner sent its first answer from w's memory (its counter, the stats
# attribute's net_inplace_bytes): the requester asked for all of w at once (8 pulls of
# 16 MiB, 4 MiB answers), so the answers after it are in flight, lent from w.
sent() { getfattr --only-values -n user.tensorfs.stats "$A" 2>/dev/null | grep -o '"net_inplace_bytes":[0-9]*' | cut -d: -f2; }
stopped= at=
for _ in $(seq 6000); do
	kill -0 "$cpid" 2>/dev/null || break
	at=$(sent)
	if [ "${at:-0}" -gt 0 ]; then kill -STOP "$db"; stopped=$(date +%s); break; fi
	sleep 0.01
done
if [ -z "$stopped" ] || [ "$(sent)" -ge $((256 * 1024 * 1024)) ]; then
	[ -n "$stopped" ] && kill -CONT "$db"
	wait "$cpid"
	echo "skip - the copy was over before the requester could be stopped (rc $?)"
	finish
	exit
fi
ok "the requester stopped while the owner sends"
old="$(shm_of "$A/m/w") $(xget "$A/m/w" ipc_offset)"
check "chmod of the tensor being sent" timeout 60 chmod 600 "$A/m/w"
check "  it moved to a segment of its new key" test "$(shm_of "$A/m/w") $(xget "$A/m/w" ipc_offset)" != "$old"
check "  its bytes are whole there" cmp "$T/w.src" "$A/m/w"
map_dump "$A/m/w" > "$T/w.mapped"
check "  and a process that maps its new handle reads them" cmp "$T/w.src" "$T/w.mapped"
# w's old chunk is still the tier's, counted as used, until UCX lets go of it: no other
# tensor is given it meanwhile.
eq "the tier counts w and w's old chunk" $((2 * 256 * 1024 * 1024)) "$(tier_stat "$A" 0 used)"
"$CTL" create "$A/m/x" --dtype u8 --shape 4096 2>/dev/null
check "a new tensor of the old key does not get w's old chunk" \
	test "$(shm_of "$A/m/x") $(xget "$A/m/x" ipc_offset)" != "$old"
check "the owner's mount still serves" serves_within 20 "$A"
# Past the requester's deadline (2 s) before it runs again.
while [ $(($(date +%s) - stopped)) -lt 5 ]; do sleep 0.5; done
kill -CONT "$db"
wait "$cpid"
rc=$?
if [ "$rc" != 0 ]; then ok "the copy fails (rc $rc)"; else nok "the copy succeeded"; fi
gone "$B/r" "the failed copy"
eq "the owner's daemon lives on" "$da" "$(daemon_pid "$A")"
eq "the requester's daemon lives on" "$db" "$(daemon_pid "$B")"
check "w's bytes once more" cmp "$T/w.src" "$A/m/w"
rm -f "$A"/m/*
# The requester's connection dropped at its deadline: UCX let go of the old chunk.
used0() { [ "$(tier_stat "$A" 0 used)" = 0 ] && [ "$(tier_stat "$A" 0 allocations)" = 0 ]; }
within() { for _ in $(seq $(($1 * 10))); do "${@:2}" && return 0; sleep 0.1; done; return 1; }
check "the pool holds no tensor any more" within 120 used0
rand_tensor "$A/m/u" $((3 * 1024 * 1024))
check "a new copy goes through" "$CTL" cp -q "$B/m/u" "$B/u"
check "  its bytes" cmp "$T/u.src" "$B/u"
finish
