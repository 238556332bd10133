# Tensors removed and renamed while the resync after a FLUSHALL runs (it lets go of the
# namespace lock between chunks): a removed one never gets its record back, a renamed one
# has its record under its new name only, and every other record comes back. How far the
# resync had come when the changes were made is printed, not asserted: it is timing (that
# operations run during a resync at all is redis/t_resync_unlocked's business).
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
N=20000
mkdir "$M/f"
make_empty "$M/f" $N
eq "$N tensors made" $N "$(rcli hlen tensorfs:dirents:f)"
# Once the resync has begun, unlinks t<50k> and renames t<50k+1> to r<50k+1>, spread over
# the table, then waits for the names to be back; prints what succeeded.
/usr/bin/python3 - "$SOCK" "$M/f" $N > "$T/races.out" <<'EOF'
import os, socket, sys, time
sock, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_UNIX); s.connect(sock); f = s.makefile("rb")
def cmd(c):
    s.sendall(c.encode() + b"\r\n")
    line = f.readline()
    return int(line[1:]) if line[:1] == b":" else line
cmd("FLUSHALL")
while not (isinstance(cmd("HLEN tensorfs:dirents:f"), int) and cmd("HLEN tensorfs:dirents:f") > 0):
    time.sleep(0.001)          # the resync has begun: its first chunk is back
gone, moved = [], []
for k in range(0, n - 1, 50):
    try: os.unlink("%s/t%d" % (d, k)); gone.append(k)
    except OSError: pass
    try: os.rename("%s/t%d" % (d, k + 1), "%s/r%d" % (d, k + 1)); moved.append(k + 1)
    except OSError: pass
    if k == 50 * 40: early = cmd("HLEN tensorfs:dirents:f")
print("names_back_after_ops %s %s" % (early, cmd("HLEN tensorfs:dirents:f")))
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    h = cmd("HLEN tensorfs:dirents:f")
    if isinstance(h, int) and h >= n - len(gone): break
    time.sleep(0.01)
print("gone " + " ".join(map(str, gone)))
print("moved " + " ".join(map(str, moved)))
EOF
gone=$(sed -n 's/^gone //p' "$T/races.out"); moved=$(sed -n 's/^moved //p' "$T/races.out")
ng=$(wc -w <<<"$gone"); nm=$(wc -w <<<"$moved")
echo "# during the resync: $ng removed, $nm renamed; names back after 40 of each, and when all were done: $(sed -n 's/^names_back_after_ops //p' "$T/races.out") of $N"
check "removes and renames went through during the resync" [ "$ng" -gt 100 -a "$nm" -gt 100 ]
for _ in $(seq 200); do grep -q "those of this node rewritten" "$T/m.log" && break; sleep 0.1; done
check "the resync finished" grep -q "those of this node rewritten" "$T/m.log"
rcli --scan --pattern 'tensorfs:tensor:f/*' | sed 's|^tensorfs:tensor:f/||' | sort > "$T/records"
rcli hkeys tensorfs:dirents:f | sort > "$T/names"
ls "$M/f" | sort > "$T/listed"
{ for k in $gone; do echo "t$k"; done; } | sort > "$T/gone"
res=$(comm -12 "$T/gone" "$T/records" | head -5)
eq "no removed tensor has its record back" "" "$res"
eq "no removed tensor has its name back" "" "$(comm -12 "$T/gone" "$T/names" | head -5)"
bad=0
for k in $moved; do grep -qx "r$k" "$T/records" && ! grep -qx "t$k" "$T/records" || bad=$((bad + 1)); done
eq "each renamed tensor's record is under its new name only" 0 "$bad"
eq "the records are the tensors the mount lists" "" "$(diff "$T/records" "$T/listed" | head -5)"
eq "and so are the names" "" "$(diff "$T/names" "$T/listed" | head -5)"
eq "every tensor not removed is there" $((N - ng)) "$(wc -l < "$T/listed")"
finish
