# A Redis outage of a few seconds during a crash of the daemon loses nothing (issue 32,
# item 2): kill -9 of the daemon while Redis is down; each restart finds Redis
# unreachable and exits 75 before serving, which the keeper counts as no crash and retries
# after its back-off, keeping every block. Once Redis is back (from its dump, on the same
# socket) a daemon serves again with every tensor and its bytes.
EXPECT_RESTARTS=1
TEST_TIMEOUT=240
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
mkdir -p "$M/a/b"
for i in $(seq 0 19); do
	case $((i % 3)) in
	0) f=t$i ;; 1) f=a/t$i ;; 2) f=a/b/t$i ;;
	esac
	head -c $((i * 40000 + 7)) /dev/urandom > "$M/$f"
done
sums() { (cd "$M" && find . -type f | sort | xargs md5sum) 2>&1; }
before=$(sums)
eq "20 tensors" 20 "$(echo "$before" | grep -c .)"
keeper=${MNT_PID[$M]}
tfs_flush
# Redis goes, saving its data to come back with it.
redis-cli -s "$SOCK" shutdown save >/dev/null 2>&1
wait "$REDIS_PID" 2>/dev/null
REDIS_PID=
kill -9 "$(daemon_pid "$M")"
down() { [ "$(grep -c "Redis did not answer" "$T/m.log")" -ge 3 ]; }
for _ in $(seq 600); do down && break; sleep 0.05; done
check "restarts while Redis is down exit 75, logged as such" down
check "the keeper still runs" kill -0 "$keeper"
start_redis || exit 1
serving() { mountpoint -q "$M" && stat -f "$M" >/dev/null 2>&1 && [ -n "$(daemon_pid "$M")" ] &&
	    [ "$(sums)" = "$before" ]; }
for _ in $(seq 600); do serving && break; sleep 0.05; done
check "once Redis is back a daemon serves every tensor with its bytes" serving
eq "every tensor kept its bytes" "$before" "$(sums)"
finish
