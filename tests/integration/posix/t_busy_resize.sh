# A tensor's memory is never moved or shrunk while another process holds it: truncate, a
# growing write, O_TRUNC and fallocate are EBUSY then, like a reshape (issue 15, item 6).
# The check is by process, not thread (item 7).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
printf abcd > "$M/f"
sleep 600 < "$M/f" & holder=$!
# Until the holder has it open (its open counts in the refcount).
for _ in $(seq 1000); do [ "$(xget "$M/f" refcount)" = 2 ] && break; sleep 0.02; done
check_err "truncate while another process holds it: EBUSY" "busy" truncate -s 8 "$M/f"
check_err "a growing write: EBUSY" "busy" python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND); os.write(fd, b"more")' "$M/f"
check_err "O_TRUNC: EBUSY" "busy" sh -c ": > '$M/f'"
check_err "fallocate past the end: EBUSY" "busy" fallocate -l 64 "$M/f"
eq "the bytes are unchanged" abcd "$(cat "$M/f")"
check "a write inside the size is fine" sh -c "printf AB | dd of='$M/f' conv=notrunc status=none"
kill $holder; wait $holder 2>/dev/null
for _ in $(seq 1000); do [ "$(xget "$M/f" refcount)" = 1 ] && break; sleep 0.02; done
check "truncate once released" truncate -s 8 "$M/f"
eq "and sized" 8 "$(size_of "$M/f")"
threads() {
	python3 - "$M/f" <<'PY'
import os, sys, threading
p = sys.argv[1]
ready, done = threading.Event(), threading.Event()
def opener():
    fd = os.open(p, os.O_RDONLY)
    ready.set(); done.wait(); os.close(fd)
t = threading.Thread(target=opener); t.start(); ready.wait()
try:
    os.setxattr(p, "user.tensor.shape", b"[16]")
    os.truncate(p, 32)
finally:
    done.set(); t.join()
PY
}
check "one process, two threads: not busy against itself" threads
eq "its size changed" 32 "$(size_of "$M/f")"
finish
