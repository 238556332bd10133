# The node lease taken by another daemon while this one runs (a stall past its TTL, say):
# the daemon never renews another's lease; it says so in the log and stops writing the
# node's records (metadata changes fail with EIO, open tensors keep working). Once the
# lease is free again it takes it back and serves as before.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
head -c 4096 /dev/urandom > "$M/a"
sum=$(md5sum < "$M/a")
ours=$(rcli get tensorfs:alive:n1)
exec 3<"$M/a"
other="0123456789abcdef0123456789abcdef 4242 otherhost"
rcli set tensorfs:alive:n1 "$other" px 60000 >/dev/null
for _ in $(seq 400); do grep -q "is now held by another daemon" "$T/m.log" && break; sleep 0.05; done
check "the daemon says another holds its node" grep -q "node n1 is now held by another daemon (pid 4242 on host otherhost)" "$T/m.log"
sleep 1.5    # a renewal or more
eq "it never renews another's lease" "$other" "$(redis-cli -s "$SOCK" get tensorfs:alive:n1)"
check_err "a new file: EIO" "Input/output error" touch "$M/b"
eq "and no record of it" 0 "$(redis-cli -s "$SOCK" exists tensorfs:tensor:b)"
eq "an open tensor still reads" "$sum" "$(md5sum <&3)"
exec 3<&-
redis-cli -s "$SOCK" del tensorfs:alive:n1 >/dev/null
for _ in $(seq 400); do [ "$(redis-cli -s "$SOCK" get tensorfs:alive:n1)" = "$ours" ] && break; sleep 0.05; done
eq "free again, the lease is taken back" "$ours" "$(redis-cli -s "$SOCK" get tensorfs:alive:n1)"
check "the daemon says so" grep -q "the lease is free again and ours" "$T/m.log"
for _ in $(seq 400); do touch "$M/b" 2>/dev/null && break; sleep 0.05; done
check "new files work again" test -e "$M/b"
eq "with their records" n1 "$(rcli hget tensorfs:tensor:b node)"
eq "and the old one's record is there" n1 "$(rcli hget tensorfs:tensor:a node)"
finish
