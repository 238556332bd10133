# The stages of one `tensorctl load` from `strace -f -ttt -T -o FILE` (load_fixed.sh):
# milestones of the command's timeline in ms since its execve, then the time the calls of
# each kind spent in the kernel (and so, for calls on the mount, in the daemon), summed over
# the threads. strace slows every call: the shares mean something, the sums overstate.
#   usage: load_fixed_stages.py STRACE_FILE
import re, sys
from collections import OrderedDict

line = re.compile(r"^(\d+)\s+(\d+\.\d+) (.*?)(?: <(\d+\.\d+)>)?$")
calls = []          # (pid, start, name, text, dur)
pending = {}        # pid -> (start, name, text) of an unfinished call
for l in open(sys.argv[1]):
    m = line.match(l.rstrip("\n"))
    if not m:
        continue
    pid, t, rest, dur = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
    if rest.startswith("<... "):
        if pid in pending:
            s, name, text = pending.pop(pid)
            calls.append((pid, s, name, text + rest, float(dur) if dur else 0.0))
        continue
    name = rest.split("(", 1)[0]
    if rest.endswith("<unfinished ...>"):
        pending[pid] = (t, name, rest)
    else:
        calls.append((pid, t, name, rest, float(dur) if dur else 0.0))
calls.sort(key=lambda c: c[1])
if not calls or calls[0][2] != "execve":
    sys.exit("no execve first in " + sys.argv[1])
main, t0 = calls[0][0], calls[0][1]
ms = lambda t: (t - t0) * 1e3

def first(pred):
    for c in calls:
        if pred(c):
            return c
    return None

def last(pred):
    for c in reversed(calls):
        if pred(c):
            return c
    return None

creat = lambda c: c[2] == "openat" and "O_CREAT" in c[3]
tfds = set()   # (pid-independent) descriptors of created tensors: "= N" of a create
for c in calls:
    if creat(c):
        m2 = re.search(r"= (\d+)", c[3].split(">")[-1] if "resumed" in c[3] else c[3])
        if m2:
            tfds.add(m2.group(1))
libs = sum(1 for c in calls if c[2] == "openat" and ".so" in c[3] and c[0] == main and
           c[1] < (first(lambda c: c[2] == "rt_sigaction") or calls[-1])[1])
steps = OrderedDict()
steps["execve"] = calls[0]
steps["main() (first rt_sigaction)"] = first(lambda c: c[2] == "rt_sigaction")
steps["source opened (header read next)"] = first(lambda c: c[2] == "openat" and "safetensors" in c[3] and "O_CREAT" not in c[3] and "/m/" not in c[3])
steps["first call on the mount's destination (mkdir)"] = first(lambda c: c[2] in ("mkdir",))
steps["first copy thread started (clone3)"] = first(lambda c: c[2] in ("clone3", "clone"))
steps["first create (LOOKUP + CREATE)"] = first(creat)
steps["first fill (ioctl) starts"] = first(lambda c: c[2] == "ioctl")
fill0 = steps["first fill (ioctl) starts"]
steps["first tensor closed (landed)"] = first(lambda c: c[2] == "close" and fill0 and c[1] > fill0[1] and re.match(r"close\((\d+)", c[3]) and re.match(r"close\((\d+)", c[3]).group(1) in tfds)
steps["last fill ends"] = last(lambda c: c[2] == "ioctl")
steps["exit_group"] = first(lambda c: c[2] in ("exit_group",))
end = None
for l in open(sys.argv[1]):
    if "+++ exited" in l and l.startswith(str(main)):
        end = float(l.split()[1])
print("| milestone | ms since execve |")
print("| --- | ---: |")
for k, c in steps.items():
    if c is None:
        print("| %s | - |" % k)
    else:
        t = c[1] + (c[4] if k in ("last fill ends",) else 0)
        print("| %s | %.2f |" % (k, ms(t)))
if end:
    print("| process gone (+++ exited) | %.2f |" % ms(end))
print("\n%d shared libraries opened before main()\n" % libs)
kinds = OrderedDict([
    ("loader: openat/mmap/mprotect/read before main()", lambda c: c[1] < steps["main() (first rt_sigaction)"][1]),
    ("fstat of each tensor (GETATTR)", lambda c: c[2] in ("fstat", "newfstatat") and re.match(r"\w+\((\d+)", c[3]) is not None and re.match(r"\w+\((\d+)", c[3]).group(1) in tfds),
    ("path checks: readlink, /proc/self/mountinfo, lstat, statfs", lambda c: c[2] in ("readlink", "statfs", "newfstatat", "lstat") or ("mountinfo" in c[3] and c[2] in ("openat", "read"))),
    ("Redis: connect()", lambda c: c[2] == "connect"),
    ("source header: pread", lambda c: c[2] == "pread64"),
    ("dest dir: mkdir, setxattr(__metadata__)", lambda c: c[2] in ("mkdir", "setxattr")),
    ("threads: clone3, stacks (mmap/mprotect/madvise), exits", lambda c: c[2] in ("clone3", "clone", "mmap", "mprotect", "madvise", "munmap", "exit", "rt_sigprocmask", "set_robust_list", "rseq")),
    ("creates: openat O_CREAT (LOOKUP + CREATE)", creat),
    ("shaping: fsetxattr dtype, shape (allocation)", lambda c: c[2] == "fsetxattr"),
    ("copy: ioctl fills", lambda c: c[2] == "ioctl"),
    ("close of tensors (FLUSH, RELEASE)", lambda c: c[2] == "close" and re.match(r"close\((\d+)", c[3]) is not None and re.match(r"close\((\d+)", c[3]).group(1) in tfds),
    ("waits between threads: futex", lambda c: c[2] == "futex"),
])
print("| calls | count | ms in calls (summed over threads) |")
print("| --- | ---: | ---: |")
seen = set()
for k, pred in kinds.items():
    n, tot = 0, 0.0
    for i, c in enumerate(calls):
        if i in seen or not pred(c):
            continue
        seen.add(i)
        n += 1
        tot += c[4]
    print("| %s | %d | %.2f |" % (k, n, tot * 1e3))
