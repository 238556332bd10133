# A node's address record that is not a daemon's (too many addresses, one too long,
# garbage) is refused by the reader with a reason in its log: its reads of that node's
# tensors fail, nothing else changes, and once the owner's own record is back they work.
. "$(dirname "$0")/netlib.sh"
net_nodes
da=$(daemon_pid "$A") db=$(daemon_pid "$B")
printf 'ABCDEFGH' > "$A/x"
eq "n2 reads n1's tensor" ABCDEFGH "$(cat "$B/x")"
good=$(rcli get tensorfs:ucx:n1)
addr=${good##* }
many="tfs-ucx1 0123456789abcdef"
for _ in $(seq 17); do many="$many $addr"; done
long="tfs-ucx1 0123456789abcdef $(head -c 4097 /dev/zero | od -An -tx1 -v | tr -d ' \n')"
refused() { ! cat "$B/x" >/dev/null 2>&1; }
rec_is() { test "$(rcli get tensorfs:ucx:n1)" = "$1"; }
# n2 reads a record again once it is a second old: past that before n1 stops, so that n1
# stays stopped (its lease running out) only for the reads below.
sleep 1.1
# n1 stopped, so that it does not publish its own record over these meanwhile.
kill -STOP "$da"
n=0
for rec in "$many" "$long" "tfs-ucx1 0123456789abcdef $addr  $addr" "tfs-ucx1 zz" \
	"tfs-ucx1 0123456789abcdef $addr $addr,"; do
	n=$((n + 1))
	# redis-cli itself: rcli waits for the daemons' writes, and n1 is stopped.
	redis-cli -s "$SOCK" set tensorfs:ucx:n1 "$rec" px 60000 >/dev/null
	# The reader uses a record it read for a second before it reads it again.
	soon refused
	check_err "record $n: the read refused" "Object is remote" cat "$B/x"
done
kill -CONT "$da"
check "n2 says why" grep -q "too many or too long addresses" "$T/b.log"
eq "n2's daemon lives on" "$db" "$(daemon_pid "$B")"
eq "n1's daemon lives on" "$da" "$(daemon_pid "$A")"
check "n1 publishes its own record again" soon rec_is "$good"
check "n2 reads n1's tensor again" soon sh -c "test \"\$(cat '$B/x')\" = ABCDEFGH"
finish
