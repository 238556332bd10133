# A daemon mounted through a Sentinel group (--redis sentinel://...) while a loop creates
# and writes tensors: the primary killed (SIGKILL) under it, the replica promoted. The
# daemon follows the new primary, creates succeed again, and every tensor the loop saw
# made exists there with its record and its bytes.
TEST_TIMEOUT=600
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/group.sh"
sentinel_group 1000 || exit 1
URL=$SURL
M=$T/m
mount_tfs "$M" --node n1 || exit 1
mkdir "$M/d"
# The load: one process creating 4.5 KiB tensors whose bytes name them; each one made (open,
# write and close without error) is appended to $T/made. Failures (EIO while Redis is
# away) are appended to $T/failed and the loop goes on with the next name: one whose
# create was made before Redis went and whose write (which sizes the tensor, a metadata
# change) failed after, stays in the namespace.
cat > "$T/load.py" <<'PY'
import os, sys, time
m, t = sys.argv[1], sys.argv[2]
made = open(t + "/made", "a", buffering=1)
failed = open(t + "/failed", "a", buffering=1)
fails = 0
i = 0
while not os.path.exists(t + "/stop"):
    i += 1
    data = (b"t%07d " % i) * 512
    try:
        with open("%s/d/t%d" % (m, i), "xb") as f:
            f.write(data)
        made.write("%d\n" % i)
    except OSError:
        fails += 1
        failed.write("%d\n" % i)
        time.sleep(0.02)
open(t + "/fails", "w").write("%d\n" % fails)
PY
/usr/bin/python3 "$T/load.py" "$M" "$T" & LOAD=$!
made() { [ -f "$T/made" ] && wc -l < "$T/made" || echo 0; }
at_least() { [ "$(made)" -ge "$1" ]; }
check "the load creates through the sentinel:// URL" waits_for 120 at_least 100
check "the records are on the primary" [ "$(redis-cli -p "$PORT_P" exists tensorfs:tensor:d/t1)" = 1 ]
kill -9 "$PID_P"; wait "$PID_P" 2>/dev/null
before=$(made)
check "the sentinels promote the replica" wait_failover
check "creates succeed again after the failover" waits_for 180 at_least $((before + 200))
touch "$T/stop"
wait "$LOAD"
n=$(made)
echo "# $n tensors made, $(cat "$T/fails") creates failed during the failover"
# Every made tensor's record on the new primary, waited for: the rewrite runs on the
# daemon's queue thread after the failover is seen.
all_there() {
	local missing
	missing=$(sed 's|^|exists tensorfs:tensor:d/t|' "$T/made" | redis-cli -p "$PORT_R" | grep -c '^0')
	[ "$missing" = 0 ]
}
tfs_flush
check "every tensor made has its record on the new primary" waits_for 180 all_there
bad_records=$(sed 's|^|hget tensorfs:tensor:d/t|; s|$| bytes|' "$T/made" | redis-cli -p "$PORT_R" | grep -cvx 4608)
eq "every record says 4608 bytes" 0 "$bad_records"
bad_node=$(sed 's|^|hget tensorfs:tensor:d/t|; s|$| node|' "$T/made" | redis-cli -p "$PORT_R" | grep -cvx n1)
eq "every record names node n1" 0 "$bad_node"
# What the directory lists beyond the tensors made: only names whose attempt failed.
redis-cli -p "$PORT_R" hkeys tensorfs:dirents:d | sed 's/^t//' | sort > "$T/listed"
sort "$T/made" > "$T/made.sorted"; sort "$T/failed" > "$T/failed.sorted"
eq "the directory lists every tensor made" "" "$(comm -13 "$T/listed" "$T/made.sorted" | head -3)"
eq "nothing else but failed attempts listed" "" \
	"$(comm -23 "$T/listed" "$T/made.sorted" | comm -23 - "$T/failed.sorted" | head -3)"
echo "# $(comm -23 "$T/listed" "$T/made.sorted" | wc -l) failed attempts left a tensor (made before Redis went, written after)"
bytes_ok() {
	/usr/bin/python3 - "$M" "$T/made" <<'PY'
import sys
m, made = sys.argv[1], sys.argv[2]
bad = [i for i in open(made).read().split()
       if open("%s/d/t%s" % (m, i), "rb").read() != (b"t%07d " % int(i)) * 512]
print(len(bad), "bad:", bad[:5])
sys.exit(1 if bad else 0)
PY
}
check "every tensor made reads back its bytes" bytes_ok
eq "the mount lists what Redis does" "$(wc -l < "$T/listed")" "$(ls "$M/d" | wc -l)"
check "the daemon logged the failover" grep -q "Redis failed over" "$T/m.log"
check "the daemon rewrote its records" grep -q "Redis is back" "$T/m.log"
finish
