# Redis stalls for less than the command timeout (SIGSTOP for 0.6 s): nothing is marked
# down and no resync follows, so what the write-behind queue sends is all Redis gets. The
# writes that pile up meanwhile (each write+close cycle saves the whole record and sets the
# refcount twice) merge per key and field, whatever came between them on other keys, and
# the records end exactly as the mount says.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
for i in 0 1 2 3 4 5 6 7 8 9; do echo data > "$M/t$i"; done
exec 3<"$M/t3"
rcli config resetstat >/dev/null
kill -STOP "$REDIS_PID"
/usr/bin/python3 - "$M" <<'EOF'
import os, sys
for r in range(20):
    for i in range(10):
        fd = os.open("%s/t%d" % (sys.argv[1], i), os.O_WRONLY)
        os.pwrite(fd, b"%d" % (r % 10), 0)
        os.close(fd)
EOF
sleep 0.4
kill -CONT "$REDIS_PID"
n=$(rcli info commandstats | sed -n 's/^cmdstat_hset:calls=\([0-9]*\),.*/\1/p')
check "600 record writes merged into a few per tensor ($n HSETs)" [ "${n:-0}" -gt 0 -a "${n:-0}" -le 60 ]
check "Redis was never marked away" not grep -q "Redis unreachable" "$T/m.log"
bad=0
for i in 0 1 2 3 4 5 6 7 8 9; do
	want="1 $(stat -c %Y "$M/t$i") 5"; [ $i = 3 ] && want="2 $(stat -c %Y "$M/t$i") 5"
	got=$(rcli hmget "tensorfs:tensor:t$i" refcount mtime bytes | tr '\n' ' ' | sed 's/ $//')
	[ "$got" = "$want" ] || { bad=$((bad + 1)); echo "# t$i: '$got', expected '$want'"; }
done
eq "every record is as the mount says (refcount, mtime, bytes)" 0 "$bad"
eq "the bytes are the last written" "9ata" "$(cat "$M/t5")"
exec 3<&-
eq "the last close is written" 1 "$(rcli hget tensorfs:tensor:t3 refcount)"
finish
