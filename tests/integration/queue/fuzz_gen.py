"""Queue fuzzer input for t_fuzz.sh: writes Redis protocol (LPUSH onto the queue) to
stdout for redis-cli --pipe, and the ids that must be answered, one per line, to the file
given as argv[1]. argv[2]: the count; argv[3]: a live pid the holds may name (the test
ends it before its final checks); argv[4]: the seed; argv[5]: a pid whose process has
exited. No hold names a pid that outlives the test (pid 1, say): its tensor would stay. Every answerable command starts with a plain top-level id and reply, so that even a
document the parser refuses can be answered; the rest aim at the daemon's own keys or carry
no reply at all."""
import json
import random
import sys

ids_path, count, live, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
dead = int(sys.argv[5])
rnd = random.Random(seed)
QUEUE = b"tensor_lifecycle"
REPLY = "fz:replies"
# Keys a reply must never touch (their types are checked afterwards).
HOSTILE_REPLY = ["tensorfs:dir:", "tensorfs:dirents:", "tensorfs:dir:d", "tensorfs:tensor:keep",
                 "tensor_lifecycle", "{tensor_lifecycle}:node:n1", "tensorfs:alive:n1",
                 "tensor_lifecycle:u:0", "fz:string", "fz:hash"]

NAMES = ["x", "y", "d/x", "d/y", "keep", "../x", "/x", "x/", "..", ".", "", "d/../x",
         "x\n2026 tensorfs: forged line", "nul\u0000/../x", "a" * 300, "d/" + "b" * 256,
         "\x7f", "\u00ff", "sp ace", "d", "nodir/x", 42, None, ["x"], {"a": 1}]
OPS = ["create", "get", "delete", "renew", "create\u0000junk", "grow", "", 5, None, ["get"]]
DTYPES = ["f32", "u8", "bf16", "float99", "", 3, None]
SHAPES = [[4], [2, 3], [], [0], [-1], [1e300], [2 ** 64], [1.5], ["4"], "[4]", [[4]],
          [1] * 17, [1 << 20, 1 << 20, 1 << 20], None, {}]
PIDS = [live, live, dead, 0, -1, 4194304, 4194305, 1e20, "12", None, 2 ** 63]
NODES = ["n1", "n1", "", "ghost", "n:1", "\xff", "a b", "{x}", 7, None]
LEASES = [None, None, 1, 2, 0, -1, 1e9, "5", 86401]


def field(d, k, choices):
    v = rnd.choice(choices)
    if v is not None or rnd.random() < 0.3:
        d[k] = v


def command(i):
    d = {}
    field(d, "op", OPS)
    field(d, "name", NAMES)
    field(d, "dtype", DTYPES)
    field(d, "shape", SHAPES)
    field(d, "pid", PIDS)
    field(d, "node", NODES)
    field(d, "lease", LEASES)
    if rnd.random() < 0.05:
        d["device"] = rnd.choice([0, 1, -1, 1 << 40, "0"])
    return d


def body(d):
    s = json.dumps(d, ensure_ascii=rnd.random() < 0.5)
    r = rnd.random()
    if r < 0.05:
        s = s[: rnd.randrange(len(s) + 1)]                      # truncated
    elif r < 0.08:
        n = rnd.choice([100, 1000, 10000])
        s = s[:-1] + (', "deep":' if len(s) > 2 else '"deep":') + "[" * n + "]" * n + "}"
    elif r < 0.10:
        s = s[:-1] + (', ' if len(s) > 2 else '') + '"big":' + "9" * 400 + "}"
    elif r < 0.12:
        s = s.replace('"', '"\x00', 1)                            # a raw NUL byte
    elif r < 0.14:
        s = s + "garbage"
    return s


out = sys.stdout.buffer
ids = []


def push(payload):
    b = payload if isinstance(payload, bytes) else payload.encode("utf-8", "surrogatepass")
    out.write(b"*3\r\n$5\r\nLPUSH\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(QUEUE), QUEUE, len(b), b))


for i in range(count):
    d = command(i)
    r = rnd.random()
    if r < 0.8:
        cid = "f%d" % i
        ids.append(cid)
        head = '{"id":"%s","reply":"%s"' % (cid, REPLY)
        rest = body(d)
        push(head + ("," + rest[1:] if rest.startswith("{") and len(rest) > 2 else "}"))
    elif r < 0.92:
        d["id"] = "h%d" % i
        d["reply"] = rnd.choice(HOSTILE_REPLY)
        push(json.dumps(d))
    else:
        push(rnd.choice([b"", b"{", b"[]", b"null", b"\x00\x01\x02", b"{\"id\":5,\"reply\":[]}",
                         ("{" * 20000).encode(), body(d).encode("utf-8", "surrogatepass")]))
with open(ids_path, "w") as f:
    f.write("\n".join(ids) + "\n")
