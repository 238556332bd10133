# A move between tiers copies without the namespace lock (docs/tiers.md): while a big
# tensor moves, metadata operations of the mount (stat of it and of another file, ls, a
# create) complete, and another process opening the moving tensor gets EBUSY (its handle
# is about to change). Shown by events, not times: a prober waits until an open of the
# tensor answers EBUSY (the move is under way), runs the metadata operations, then opens
# again: EBUSY again proves the move was still under way when they returned. A move too
# quick to catch is tried again; with the lock held for the copy no probe ever sees EBUSY
# (it waits behind the move) and every try fails.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
cd "$T" || exit 1
M=$T/m
mount_tfs "$M" --backend host -o host_devices=1 --max-bytes cpu:1G,0:1G || exit 1

truncate -s 384M "$M/big"
echo other > "$M/other"
cat > "$T/probe.py" <<'PY'
import errno, os, sys
m = sys.argv[1]
def busy():
    try:
        os.close(os.open(m + "/big", os.O_RDONLY))
        return False
    except OSError as e:
        if e.errno != errno.EBUSY:
            raise
        return True
# Until the move is seen under way, or the mover is gone (too quick: try again).
mover = int(sys.argv[2])
while not busy():
    try:
        os.kill(mover, 0)
        if open("/proc/%d/stat" % mover).read().split()[2] == "Z":
            raise ProcessLookupError
    except (ProcessLookupError, FileNotFoundError):
        print("missed"); sys.exit(0)
os.stat(m + "/big")
os.stat(m + "/other")
os.listdir(m)
os.close(os.open(m + "/made%d" % mover, os.O_CREAT | os.O_WRONLY, 0o644))
print("during" if busy() else "after")
PY
caught=0 tries=0 dev=cpu
while [ $tries -lt 30 ] && [ $caught = 0 ]; do
	tries=$((tries + 1))
	setfattr -n user.tensor.device -v $dev "$M/big" & mover=$!
	r=$(/usr/bin/python3 "$T/probe.py" "$M" "$mover" 2>&1)
	wait "$mover" || { nok "the move to $dev failed"; break; }
	[ "$r" = during ] && caught=1
	case $r in during|after|missed) ;; *) nok "probe: $r"; break ;; esac
	dev=$([ $dev = cpu ] && echo 0 || echo cpu)
done
eq "stat, ls and a create complete while a move copies (try $tries)" 1 "$caught"
eq "the tensor ended on the last tier asked" "$([ $dev = cpu ] && echo 0 || echo cpu)" "$(xget "$M/big" device)"
check "its bytes are zeros still" cmp -n $((384 << 20)) /dev/zero "$M/big"
check "the files made meanwhile are there" test -n "$(ls "$M" | grep '^made')"
finish
