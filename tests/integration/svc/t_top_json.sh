# tensorctl top --json: the figures move with what happens on the mount. Tensors, bytes
# per device and per owner and holders from the mount; FUSE requests, reads, writes and
# queue commands from the daemon's counters (user.tensorfs.stats), and their rates.
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
one_mount
# jq FIELD < json: a field of the object by a Python expression on o
jf() { "$PY" -c "import json,sys; o=json.load(sys.stdin); print($1)"; }

"$CTL" top --json --interval 0 "$M" > a.json
check "top --json --interval 0 prints one JSON object" jf 'o["mount"]' < a.json
eq "an empty mount: 0 tensors" 0 "$(jf 'o["tensors"]' < a.json)"
eq "no rates without an interval" None "$(jf 'o["rates"]' < a.json)"
eq "the daemon's pid" "$(daemon_pid "$M")" "$(jf 'o["pid"]' < a.json)"

head -c 3000 /dev/urandom > blob
"$CTL" create "$M/a" --dtype f32 --shape 4,4 >/dev/null
cp blob "$M/b"
cat "$M/b" "$M/b" > /dev/null
touch "$M/c"; setfattr -n user.tensor.shape -v '[10]' "$M/c"; chown 65534 "$M/c"
qsend '{"op":"create","name":"q","dtype":"u8","shape":[5]}' > /dev/null
qsend "{\"op\":\"get\",\"name\":\"q\",\"pid\":$$}" > /dev/null   # a queue holder
exec 3< "$M/a"                                                  # an open file holds a
"$CTL" top --json --interval 0 "$M" > b.json
exec 3<&-
eq "4 tensors after creating four" 4 "$(jf 'o["tensors"]' < b.json)"
eq "their bytes: 64 + 3000 + 10 + 5" 3079 "$(jf 'o["bytes"]' < b.json)"
eq "one device, with all of them" "[(0, 4, 3079)]" \
	"$(jf '[(d["device"], d["tensors"], d["bytes"]) for d in o["devices"]]' < b.json)"
eq "per owner: root 3 tensors, uid 65534 one of 10 bytes" "[(0, 3, 3069), (65534, 1, 10)]" \
	"$(jf '[(w["uid"], w["tensors"], w["bytes"]) for w in o["owners"]]' < b.json)"
eq "holders: the open file and the queue's hold" 2 "$(jf 'o["holders"]' < b.json)"
check "FUSE requests went up" test "$(jf 'o["counters"]["requests"]' < b.json)" -gt "$(jf 'o["counters"]["requests"]' < a.json)"
check "reads went up by at least the 2 cat reads" test "$(jf 'o["counters"]["reads"] - '"$(jf 'o["counters"]["reads"]' < a.json)" < b.json)" -ge 2
check "read bytes went up by at least 6000" test "$(jf 'o["counters"]["read_bytes"]' < b.json)" -ge 6000
check "write bytes went up by at least the 3000 of cp" test "$(jf 'o["counters"]["write_bytes"]' < b.json)" -ge 3000
eq "queue commands: the create and the get" 2 "$(jf 'o["counters"]["queue_commands"] - '"$(jf 'o["counters"]["queue_commands"]' < a.json)" < b.json)"

# Rates over an interval while something reads in a loop.
( end=$((SECONDS + 3)); while [ $SECONDS -lt $end ]; do cat "$M/b" > /dev/null; done ) &
loop=$!
"$CTL" top --json --interval 1 "$M" > c.json
wait $loop
check "rates over --interval 1: requests/s > 0" jf 'o["rates"]["requests"] > 0 or sys.exit(1)' < c.json
check "rates over --interval 1: read bytes/s > 0" jf 'o["rates"]["read_bytes"] > 0 or sys.exit(1)' < c.json
eq "the interval is said" 1.0 "$(jf 'o["interval"]' < c.json)"

# Not a terminal: a block per interval, --count of them.
"$CTL" top --interval 0.2 --count 2 "$M" > screens.txt
eq "top --count 2 off a terminal: two blocks" 2 "$(grep -c '^tensorfs ' screens.txt)"
check "a block names the tensors and the owners" bash -c "grep -q '^tensors 4 ' screens.txt && grep -q '^OWNER' screens.txt"
check_err "top on a path outside tensorfs fails clearly" "not on a tensorfs mount" "$CTL" top --json /
check_err "top --interval abc is a usage error" "seconds from 0 to 3600" "$CTL" top --interval abc "$M"
check_err "top --count 0 is a usage error" "number of screens" "$CTL" top --count 0 "$M"
check_err "the counters attribute is read-only" "Operation not permitted" setfattr -n user.tensorfs.stats -v 1 "$M"
rm -f "$M/a" "$M/b" "$M/c"
qsend "{\"op\":\"delete\",\"name\":\"q\",\"pid\":$$}" > /dev/null
qsend '{"op":"delete","name":"q"}' > /dev/null
finish
