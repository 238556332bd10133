# Two daemons with one --node on one Redis would sweep each other's records (issue 15,
# item 14). The node lease (<prefix>:alive:<node>) lets one run: a second daemon of node n1
# exits 1 before it mounts, says who holds the node and changes nothing; after a clean
# unmount the lease is gone and another daemon of n1 starts; after kill -9 of a keeper and
# its daemon the next daemon on this machine sees the holder is gone and starts at once;
# a holder on another host is waited out (its lease runs out within its TTL).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
head -c 4096 /dev/urandom > "$M/t"
sum=$(md5sum < "$M/t")
rec=$(rcli hgetall tensorfs:tensor:t | md5sum)
lease=$(rcli get tensorfs:alive:n1)
dpid=${MNT_PID[$M]}      # the keeper: SIGTERM to it stops the daemon
eq "the lease names the keeper of the serving daemon and this host" "$dpid $(hostname)" "$(echo "$lease" | cut -d' ' -f2,3)"
check "with a TTL of at most 5 s" test "$(rcli pttl tensorfs:alive:n1)" -gt 0 -a "$(rcli pttl tensorfs:alive:n1)" -le 5000

mkdir "$T/m2"
timeout 20 "$TFS" -f --redis "$URL" --log "$T/m2.log" --node n1 "$T/m2"; rc=$?
fusermount3 -uz "$T/m2" 2>/dev/null
eq "a second daemon of node n1 exits 1" 1 "$rc"
check "saying who holds the node" grep -qF "node n1 is held by another daemon (pid $dpid on host $(hostname)); use --node" "$T/m2.log"
check "it never mounted" not grep -q "mounted $T/m2" "$T/m2.log"
eq "the first daemon's record is intact" "$rec" "$(rcli hgetall tensorfs:tensor:t | md5sum)"
eq "its lease too" "$lease" "$(rcli get tensorfs:alive:n1)"
eq "the first daemon serves its tensor" "$sum" "$(md5sum < "$M/t")"
check "and makes new ones" touch "$M/after"
check "whose records reach Redis" test "$(rcli hget tensorfs:tensor:after node)" = n1

umount_tfs "$M"
eq "a clean unmount deletes the lease" 0 "$(rcli exists tensorfs:alive:n1)"
mount_tfs "$T/m2" --node n1 || exit 1
check "then another daemon of n1 starts" mountpoint -q "$T/m2"
lease2=$(rcli get tensorfs:alive:n1)
check "with a token of its own" test "${lease2%% *}" != "${lease%% *}"

kpid=${MNT_PID[$T/m2]}; dpid=$(daemon_pid "$T/m2")
kill -9 "$kpid" "$dpid"; wait "$kpid" 2>/dev/null
unset "MNT_PID[$T/m2]"
fusermount3 -uz "$T/m2" 2>/dev/null
mount_tfs "$T/m3" --node n1 || exit 1
check "a new daemon of n1 starts at once: the holder is gone" mountpoint -q "$T/m3"
check "saying so" grep -q "node n1: its last daemon (pid $kpid on host $(hostname)) is gone: lease taken over" "$T/m3.log"
umount_tfs "$T/m3"

rcli set tensorfs:alive:n9 "0123456789abcdef0123456789abcdef 1 elsewhere 00000000-0000-0000-0000-000000000000/1" px 1500 > /dev/null
mkdir "$T/m4"
timeout 20 "$TFS" -f --redis "$URL" --log "$T/m4.log" --node n9 "$T/m4"; rc=$?
eq "a holder on another host is not taken over" 1 "$rc"
start=$(date +%s%N)
for _ in $(seq 400); do [ "$(rcli exists tensorfs:alive:n9)" = 0 ] && break; sleep 0.05; done
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "# the other host's lease ran out after $ms ms"
eq "its lease runs out" 0 "$(rcli exists tensorfs:alive:n9)"
mount_tfs "$T/m4" --node n9 || exit 1
check "and then a daemon of n9 starts" mountpoint -q "$T/m4"
finish
