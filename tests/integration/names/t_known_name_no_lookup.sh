# The kernel keeps the names it looked up (fs/kernel/kernel_cache.c): an open of a known name is
# one FUSE request, not two; with -o entry_timeout=0 each open looks the name up again.
# The first mount keeps names 600 s rather than the default 1 s, so that a slow machine
# (ten opens taking over a second) cannot make a name expire between them.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
A=$T/a
C=$T/c
mount_tfs "$A" --node n1 --debug -o entry_timeout=600 || exit 1
mount_tfs "$C" --node n3 --debug -o entry_timeout=0 || exit 1
# Names are kept only while Redis reports changes (client tracking, store/dircache.c):
# until the daemon has turned it on, a slow start answers each name with no lifetime. Wait
# for both daemons' writer connections to carry the tracking flag ('t'; the subscribers,
# 'P', carry it too), then one open that may still look x up.
tracked() {
	[ "$(redis-cli -s "$SOCK" client list | grep -v ' flags=[^ ]*P' | grep -c ' flags=[^ ]*t')" -ge 2 ]
}
check "Redis reports changes to both daemons (tracking on)" soon tracked
printf 'ABCD' > "$A/x"
cat "$A/x" > /dev/null
n=$(wc -l < "$T/a.log")
for _ in $(seq 10); do cat "$A/x" > /dev/null; done
eq "10 opens of a known name: no LOOKUP" 0 "$(lookups_since "$T/a.log" "$n" x)"
eq "10 opens of a known name: 10 OPENs" 10 "$(tail -n +"$((n + 1))" "$T/a.log" | grep -c "opcode: OPEN ")"
n=$(wc -l < "$T/c.log")
for _ in $(seq 10); do : < "$C/x"; done
check "with -o entry_timeout=0 each open looks the name up" \
	test "$(lookups_since "$T/c.log" "$n" x)" -ge 10
finish
