# Small commands are taken off the queue together, weighed as one, but a command over
# queue_max_command among them is still refused on its own: an LPUSH of small creates
# with a command of 100 KiB among them (read in the same take, answered EMSGSIZE from its
# first bytes), then one with a command of 300 KiB (too large to read in a take: set
# aside, its start fetched, answered EMSGSIZE). Every command answered once, in order,
# the small ones made, nothing left on the processing list or set aside.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1     # queue_max_command: 64 KiB by default
# push FIRST LAST BIG PAD: one LPUSH of creates mFIRST..mLAST, mBIG padded by PAD bytes
push() {
	/usr/bin/python3 - "$SOCK" "$@" <<'PY'
import socket, sys
first, last, big, pad = (int(a) for a in sys.argv[2:6])
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
def bulk(b): return b"$%d\r\n%s\r\n" % (len(b), b)
cmds = []
for i in range(first, last + 1):
    c = ('{"id":"m%d","reply":"tq:mixed","op":"create","name":"m%d","dtype":"u8","shape":[1]'
         % (i, i)).encode()
    if i == big:
        c += b',"pad":"' + b"x" * pad + b'"'
    cmds.append(c + b"}")
# LPUSH pushes each at the head: the first listed is the oldest, taken first.
s.sendall(b"*%d\r\n" % (len(cmds) + 2) + bulk(b"LPUSH") + bulk(b"tensor_lifecycle") +
          b"".join(bulk(c) for c in cmds))
assert s.recv(100).startswith(b":")
PY
}
# 100 KiB: the 20 weigh less than two commands may, and are read in one take.
push 0 19 10 $((100 << 10))
# 300 KiB: more than two commands may weigh: these are taken one at a time.
push 20 39 30 $((300 << 10))
for _ in $(seq 400); do
	[ "$(redis-cli -s "$SOCK" llen tq:mixed)" -ge 40 ] && break
	sleep 0.05
done
rcli lrange tq:mixed 0 -1 | tac > "$T/answers"
eq "every command answered once, in order" "$(seq 0 39 | sed 's/^/m/' | paste -sd' ')" \
	"$(/usr/bin/python3 -c 'import json,sys; print(" ".join(json.loads(l)["id"] for l in sys.stdin))' < "$T/answers")"
eq "the small ones made, the large ones EMSGSIZE" \
	"$(for i in $(seq 0 39); do if [ "$i" = 10 ] || [ "$i" = 30 ]; then echo EMSGSIZE; else echo ok; fi; done | paste -sd' ')" \
	"$(/usr/bin/python3 -c 'import json,sys; print(" ".join("ok" if json.loads(l).get("ok") else json.loads(l)["error"] for l in sys.stdin))' < "$T/answers")"
eq "38 tensors in the mount" 38 "$(ls "$M" | grep -c '^m')"
check "the 300 KiB command went through the set-aside path" grep -q "command of about" "$T/answers"
eq "nothing left on the queue, the processing list or set aside" "0 0 0" \
	"$(rcli llen tensor_lifecycle) $(rcli llen '{tensor_lifecycle}:processing:n1') $(rcli --scan --pattern '{tensor_lifecycle}:oversize:*:*' | wc -l)"
finish
