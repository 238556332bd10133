# The owning daemon killed (kill -9) while another node replicates its directory: the
# copy fails with a clear error and leaves nothing at the destination; the keeper restarts
# the owner, whose tensors are intact, and a second copy, to the new daemon, succeeds.
EXPECT_RESTARTS=1
. "$(dirname "$0")/netlib.sh"
net_nodes
mkdir "$A/m"
for i in 0 1 2 3; do rand_tensor "$A/m/w$i" $((4 * 1024 * 1024)); done
# The owner stopped first, so that the copy is surely mid-transfer when it dies: its
# reads wait, unanswered, until the kill.
d=$(daemon_pid "$A")
rec=$(redis-cli -s "$SOCK" get tensorfs:ucx:n1)
kill -STOP "$d"
# A stopped daemon renews nothing: on a loaded machine its address record (5 s) could lapse
# before the copy reaches it, and the copy would fail EREMOTE at once instead of waiting.
# Kept without a lifetime here; the restarted daemon's own record replaces it.
redis-cli -s "$SOCK" set tensorfs:ucx:n1 "$rec" > /dev/null
"$CTL" cp -r -q "$B/m" "$B/r" > "$T/cp.out" 2> "$T/cp.err" &
cp_pid=$!
check "the copy waits for the stopped owner" soon waiting "$cp_pid"
# What the copy was doing, for a failure of the check above.
for f in /proc/"$cp_pid"/task/*/syscall; do echo "# cp thread: $(cat "$f" 2>/dev/null | cut -d' ' -f1)"; done | sort | uniq -c | sed 's/^ */# /'
kill -9 "$d"
wait "$cp_pid"; rc=$?
check "the copy failed" test "$rc" -ne 0
check "with one clear message" grep -Eq "^tensorctl: .*(Connection reset by peer|Connection refused)" "$T/cp.err"
sed 's/^/# cp: /' "$T/cp.err" | head -5
gone "$B/r" "the failed copy"
check "the keeper restarted the owner" soon sh -c "[ -n \"\$(pgrep -P ${MNT_PID[$A]} -x tensorfs)\" ] && [ \"\$(pgrep -P ${MNT_PID[$A]} -x tensorfs)\" != $d ]"
new_rec() { r=$(redis-cli -s "$SOCK" get tensorfs:ucx:n1); [ -n "$r" ] && [ "$r" != "$rec" ]; }
check "the new daemon publishes its address" soon new_rec
for i in 0 1 2 3; do check "source w$i intact" cmp "$T/w$i.src" "$A/m/w$i"; done
check "a second copy reaches the restarted owner" soon "$CTL" cp -r -q "$B/m" "$B/r"
for i in 0 1 2 3; do check "  w$i copied" cmp "$T/w$i.src" "$B/r/w$i"; done
finish
