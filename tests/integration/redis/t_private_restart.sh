# The private redis-server (no --redis) is supervised: killed, it is restarted from its
# append-only file and the mount keeps working, records included (issue 15, item 14).
. "$(dirname "$0")/../lib.sh"
M=$T/m
mount_private "$M"
printf abcd > "$M/x"; sync "$M"
check "redis-server pid $rpid is alive" kill -0 "$rpid"
kill -9 "$rpid"
back() { grep -q "private redis-server back" "$T/m.log"; }
within20() { for _ in $(seq 400); do "$@" && return 0; sleep 0.05; done; return 1; }
check "the daemon restarts it" within20 back
newpid=$(grep -o "private redis-server back (pid [0-9]*)" "$T/m.log" | tail -1 | grep -o "[0-9]*")
check "a new process ($newpid)" test "${newpid:-0}" != "$rpid"
mk() { touch "$M/y" 2>/dev/null; }
check "the mount makes tensors again" within20 mk
eq "x still reads" abcd "$(cat "$M/x")"
rec() { [ "$(redis-cli -s "$rsock" hget tensorfs:tensor:x bytes)" = 4 ]; }
check "x's record is in the restarted Redis" within20 rec
umount_tfs "$M"
check "the private redis-server is stopped at unmount" sh -c "! kill -0 $newpid 2>/dev/null"
check "and its runtime directory removed" test ! -e "$(dirname "$rsock")"
finish
