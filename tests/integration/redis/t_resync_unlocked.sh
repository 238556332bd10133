# Redis loses everything (FLUSHALL) under a mount with thousands of tensors: the resync
# that writes their records back takes the namespace lock a chunk at a time, so mkdir
# through the mount answers while it runs. The bound is derived from the resync's own
# duration in this run (the time the names take to come back), not a timing constant:
# with the lock held for the whole pass, an operation started during it waits about as
# long as the pass itself.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
N=30000
mkdir "$M/f"
make_empty "$M/f" $N
eq "$N tensors made" $N "$(rcli hlen tensorfs:dirents:f)"
# Measures, from FLUSHALL on: the time the first and the last of the N names are back
# (HLEN of f's entries, polled over the socket), and each mkdir's latency meanwhile.
/usr/bin/python3 - "$SOCK" "$M" $N > "$T/measure.out" <<'EOF'
import os, socket, sys, threading, time
sock, mnt, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_UNIX); s.connect(sock); f = s.makefile("rb")
def cmd(c):
    s.sendall(c.encode() + b"\r\n")
    line = f.readline()
    return int(line[1:]) if line[:1] == b":" else line
ops, stop = [], threading.Event()
def loop():
    i = 0
    while not stop.is_set():
        t0 = time.monotonic()
        try: os.mkdir("%s/d%d" % (mnt, i)); ok = 1
        except OSError: ok = 0
        ops.append((t0, time.monotonic(), ok)); i += 1
        time.sleep(0.002)
th = threading.Thread(target=loop); th.start()
time.sleep(0.2)
cmd("FLUSHALL")
first = last = None
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    h = cmd("HLEN tensorfs:dirents:f")
    now = time.monotonic()
    if first is None and isinstance(h, int) and h > 0: first = now
    if isinstance(h, int) and h >= n: last = now; break
    time.sleep(0.002)
time.sleep(0.2); stop.set(); th.join()
if first is None or last is None:
    print("resync did not finish"); sys.exit(1)
# Those made while the names came back: with the lock held for the whole pass, none (the
# one that waits blocks the loop until the pass ends).
during = [o for o in ops if first <= o[0] and o[1] < last]
worst = max([o[1] - o[0] for o in ops if first <= o[0] < last] or [0])
sys.stderr.write("# slowest mkdirs (ms, started at ms): %s\n" % sorted([(round((o[1]-o[0])*1000), round((o[0]-first)*1000)) for o in ops if first <= o[0] < last])[-3:])
print("duration_ms %d during %d worst_ms %d mkdirs_ok %d" %
      ((last - first) * 1000, len(during), worst * 1000, sum(o[2] for o in ops)))
EOF
read -r _ dur _ during _ worst _ made < <(tail -1 "$T/measure.out")
echo "# resync: names back over ${dur:-?} ms; $during mkdir(s) during it, the slowest ${worst:-?} ms"
check "the resync finished" [ -n "${dur:-}" ]
dur=${dur:-0}; during=${during:-0}; worst=${worst:-999999}
check "the resync took long enough to measure (${dur} ms over 117 chunks)" [ "$dur" -ge 20 ]
check "mkdir kept answering during the resync ($during of them)" [ "$during" -ge 3 ]
check "the slowest mkdir (${worst} ms) is far below the resync (${dur} ms)" \
	[ $((worst * 2)) -lt "$dur" ]
# Every record back, and every directory made meanwhile.
for _ in $(seq 200); do [ "$(rcli exists tensorfs:tensor:f/t$((N - 1)))" = 1 ] && break; sleep 0.1; done
eq "every tensor record is back" $N "$(rcli --scan --pattern 'tensorfs:tensor:f/*' | wc -l)"
eq "every name is back" $N "$(rcli hlen tensorfs:dirents:f)"
eq "a record is whole" "0 1" "$(rcli hmget tensorfs:tensor:f/t17 bytes refcount | tr '\n' ' ' | sed 's/ $//')"
eq "every directory made meanwhile is there" "$made" "$(ls "$M" | grep -c '^d[0-9]')"
check "the log says the records were rewritten" grep -q "those of this node rewritten" "$T/m.log"
finish
