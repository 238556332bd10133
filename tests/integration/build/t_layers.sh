#!/usr/bin/env bash
# The daemon's layers (docs/layout.md): each folder of fs/ uses only the folders below it,
# no circle of files crosses two folders, and no .c file is over 900 lines. Checked from
# the sources' #include lines and, when the build is there, from the objects' symbols
# (a call through a header of the top, e.g. one declared in daemon.h, shows there).
# Needs no mount and no Redis.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BUILD=${BUILD:-build}
cd "$ROOT" || exit 1
command -v python3 >/dev/null || { echo "skip - layers: python3 is not installed"; exit 0; }

python3 - "$BUILD" <<'EOF'
import os, re, subprocess, sys

build = sys.argv[1]
# Bottom to top. Folders of one rank may use each other, but no circle of files may
# cross them (mem/cuda and mem/keeper are of mem's rank). "" is fs/ itself: main.c,
# daemon.h, notify.c.
ORDER = ["util", "mem", "kernel", "store", "tensors", "net", "transport", "queue", "handles", "fuse", ""]
MAXLINES = 900
# Folders whose files must not call each other in a circle either (one leaf each for what
# every file of the folder needs, e.g. error reporting).
ACYCLIC = ["mem/cuda"]
# Known exceptions, each with the reason it is allowed for now: (file, symbol or header).
ALLOWED = set()    # no exceptions: every folder calls only downward

fails = 0
def ok(msg): print("ok - " + msg)
def nok(msg, lines=()):
    global fails
    fails += 1
    print("not ok - " + msg)
    for l in list(lines)[:80]:
        print("      " + l)

def folder(path):                 # "store/conn.c" -> "store"
    d = os.path.dirname(path)
    return d
def rank(fold):
    top = fold.split("/")[0]
    return ORDER.index(top) if top in ORDER else None
def unit(path):                   # a .c and its .h are one unit
    return re.sub(r"\.[ch]$", "", path)

srcs = []
for dp, dn, fn in os.walk("fs"):
    for f in fn:
        if f.endswith((".c", ".h")):
            srcs.append(os.path.relpath(os.path.join(dp, f), "fs"))
srcs.sort()
unknown = sorted({folder(s) for s in srcs if rank(folder(s)) is None})
if unknown:
    nok("every folder of fs/ has its place in the order", unknown)
else:
    ok("every folder of fs/ has its place in the order")

# --- includes ---
edges = {}                        # unit -> {unit: why}
def edge(a, b, why):
    if a != b:
        edges.setdefault(a, {}).setdefault(b, why)
inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
up = []
for s in srcs:
    with open(os.path.join("fs", s), errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            m = inc_re.match(line)
            if not m:
                continue
            name = m.group(1)
            cands = [os.path.normpath(os.path.join(folder(s), name)), name]
            tgt = next((c for c in cands if os.path.isfile(os.path.join("fs", c))), None)
            if tgt is None:
                continue          # core/, lib/ or a system header
            if (s, tgt) in ALLOWED:
                continue
            edge(unit(s), unit(tgt), "%s:%d includes %s" % (s, n, tgt))
            rs, rt = rank(folder(s)), rank(folder(tgt))
            if rs is not None and rt is not None and rt > rs:
                up.append("fs/%s:%d includes %s (%s above %s)" %
                          (s, n, tgt, folder(tgt) or "fs/", folder(s) or "fs/"))
if up:
    nok("no include of a folder above (%d)" % len(up), up)
else:
    ok("no include of a folder above")

# --- symbols: who uses what another object defines ---
objs = []
for dp, dn, fn in os.walk(os.path.join(build, "fs")):
    # An object whose source is gone (a file moved since the last build) is not the daemon's.
    objs += [os.path.join(dp, f) for f in fn if f.endswith(".o") and
             os.path.isfile(os.path.join("fs", os.path.relpath(dp, os.path.join(build, "fs")), f[:-2] + ".c"))]
def nm(args, o):
    out = subprocess.run(["nm"] + args + [o], capture_output=True, text=True).stdout
    return [l.split()[-1] for l in out.splitlines() if l.strip()]
if not objs:
    print("skip - symbols: no objects under %s/fs (make first)" % build)
else:
    defs, uses = {}, {}
    for o in sorted(objs):
        src = os.path.relpath(o, os.path.join(build, "fs"))[:-2] + ".c"
        for sym in nm(["-g", "--defined-only"], o):
            defs[sym] = src
        uses[src] = nm(["-u"], o)
    upsym = {}
    for src, syms in uses.items():
        for sym in syms:
            d = defs.get(sym)
            if d is None or d == src:
                continue
            if (src, sym) in ALLOWED:
                continue
            edge(unit(src), unit(d), "%s uses %s of %s" % (src, sym, d))
            rs, rt = rank(folder(src)), rank(folder(d))
            if rs is not None and rt is not None and rt > rs:
                upsym.setdefault("fs/%s -> %s" % (src, folder(d) or "fs/"), []).append(sym)
    lines = ["%s: %s" % (k, " ".join(sorted(set(v)))) for k, v in sorted(upsym.items())]
    if lines:
        nok("no object uses a symbol of a folder above (%d)" % len(lines), lines)
    else:
        ok("no object uses a symbol of a folder above")

# --- circles of units that cross folders (Tarjan's strongly connected components) ---
index, low, onstack, stack, sccs, counter = {}, {}, set(), [], [], [0]
sys.setrecursionlimit(10000)
def visit(v):
    index[v] = low[v] = counter[0]; counter[0] += 1
    stack.append(v); onstack.add(v)
    for w in edges.get(v, {}):
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in onstack:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); onstack.discard(w); comp.append(w)
            if w == v:
                break
        sccs.append(comp)
nodes = set(edges) | {w for v in edges for w in edges[v]}
for v in sorted(nodes):
    if v not in index:
        visit(v)
bad = []
for comp in sccs:
    folders = {folder(u) for u in comp}
    if len(comp) < 2 or (len(folders) < 2 and folders.isdisjoint(ACYCLIC)):
        continue
    cs = set(comp)
    bad.append("circle: " + " ".join(sorted(comp)))
    for u in sorted(comp):
        for w, why in sorted(edges.get(u, {}).items()):
            if w in cs and (folder(w) != folder(u) or folder(u) in ACYCLIC):
                bad.append("   " + why)
if bad:
    nok("no circle of files crossing two folders (or inside %s)" % " ".join(ACYCLIC), bad)
else:
    ok("no circle of files crossing two folders (or inside %s)" % " ".join(ACYCLIC))

# --- file sizes ---
big = []
for s in srcs:
    if s.endswith(".c"):
        with open(os.path.join("fs", s), errors="replace") as fh:
            n = sum(1 for _ in fh)
        if n > MAXLINES:
            big.append("fs/%s: %d lines" % (s, n))
if big:
    nok("no .c file of fs/ over %d lines" % MAXLINES, big)
else:
    ok("no .c file of fs/ over %d lines" % MAXLINES)
sys.exit(1 if fails else 0)
EOF
