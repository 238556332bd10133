# Redis stalls (SIGSTOP) while records change on many keys: the write-behind queue stays
# within its bound (TENSORFS_WRITE_QUEUE_MAX, 100 here) by dropping what it holds, says so
# once, and when Redis answers again (with its data) every record is right: refcounts,
# shapes set meanwhile, user attributes, and no record left of the tensors freed during
# the stall (their DELs were among the writes dropped).
. "$(dirname "$0")/../lib.sh"
export TENSORFS_WRITE_QUEUE_MAX=100
one_mount --node n1
N=300
make_empty "$M" $N
for i in 0 1 2; do setfattr -n user.tag -v "tag$i" "$M/t$i"; done
for i in 10 11 12; do setfattr -n user.tensor.shape -v 4,2 "$M/t$i"; done
# Tensors unlinked while open: their records live under unlinked keys until closed.
for i in 0 1 2 3 4; do echo x > "$M/u$i"; done
exec 5<"$M/u0" 6<"$M/u1" 7<"$M/u2" 8<"$M/u3" 9<"$M/u4"
rm "$M"/u[0-4]
exec 4<"$M/t7"                                   # stays open through the stall
eq "the unlinked records are there" 5 "$(rcli --scan --pattern 'tensorfs:unlinked:n1:*' | wc -l)"
kill -STOP "$REDIS_PID"
# A create waits for its claim: past the command timeout (1 s) the daemon knows Redis is away.
check_err "a create during the stall fails" "Input/output error" touch "$M/new"
okn=0
for round in 1 2 3; do
	for i in $(seq 0 $((N - 1))); do : 2>/dev/null < "$M/t$i" && okn=$((okn + 1)); done
done
eq "open/close cycles work while Redis stalls" $((3 * N)) "$okn"
exec 5<&- 6<&- 7<&- 8<&- 9<&-                   # the unlinked tensors are freed now
check_err "a reshape during the stall is refused" "Input/output error" \
	setfattr -n user.tensor.shape -v 8,2 "$M/t10"
check "the queue was dropped at its bound, said once" \
	[ "$(grep -c 'record writes: more than 100 queued' "$T/m.log")" = 1 ]
kill -CONT "$REDIS_PID"
back() { grep -q "dropped are made good" "$T/m.log"; }
for _ in $(seq 200); do back && break; sleep 0.1; done
check "Redis answers: the dropped writes are made good" back
check "no record is left of the tensors freed during the stall" \
	[ "$(rcli --scan --pattern 'tensorfs:unlinked:*' | wc -l)" = 0 ]
eq "every tensor has its record" $N "$(rcli --scan --pattern 'tensorfs:tensor:t[0-9]*' | wc -l)"
eq "and its name" $N "$(rcli hkeys tensorfs:dirents: | grep -c '^t[0-9]')"
bad=0
for i in $(seq 0 $((N - 1))); do
	want=1; [ $i = 7 ] && want=2
	got=$(redis-cli -s "$SOCK" hget "tensorfs:tensor:t$i" refcount)
	[ "$got" = $want ] || { bad=$((bad + 1)); echo "# t$i: refcount '$got', expected $want"; }
done
eq "every refcount is right (the open one counts its fd)" 0 "$bad"
eq "the user attributes are kept" "tag0 tag1 tag2" \
	"$(for i in 0 1 2; do rcli hget "tensorfs:tensor:t$i" x:tag; done | tr '\n' ' ' | sed 's/ $//')"
eq "the shapes set before the stall are in the records, unchanged" "[4,2] [4,2] [4,2] [4,2]" \
	"$(for i in 10 11 12; do rcli hget "tensorfs:tensor:t$i" shape; done | tr '\n' ' '; xget "$M/t10" shape)"
exec 4<&-
# The kernel sends the release after close returns.
soon test "$(rcli hget tensorfs:tensor:t7 refcount)" = 1
eq "the last close is written" 1 "$(rcli hget tensorfs:tensor:t7 refcount)"
echo y > "$M/new"
eq "new tensors work" 1 "$(rcli hget tensorfs:tensor:new refcount)"
finish
