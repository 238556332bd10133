# SIGTERM while the rings serve (-o io_uring, enable_uring Y): the ring threads stop at the
# daemon's word, not at an unmount, and the daemon still exits 0, unmounted, records gone.
# enable_uring is global: put back on every way out.
# tfs-test: alone (it sets the fuse module's enable_uring, which every mount of the machine shares)
. "$(dirname "$0")/../lib.sh"
enable_uring Y
start_redis || exit 1
S=$T/s
mkdir -p "$S"
"$TFS" -f --redis "$URL" --log "$T/s.log" -o io_uring "$S" &
pid=$!
for _ in $(seq 400); do mountpoint -q "$S" && break; sleep 0.05; done
head -c 3000000 /dev/urandom > "$T/src"
cp "$T/src" "$S/t"
check "the bytes came back over the rings" cmp "$T/src" "$S/t"
n=$(jfield "$(getfattr --only-values -n user.tensorfs.stats "$S" 2>/dev/null)" uring_requests)
check "requests came over the rings" test "$n" -gt 0
stop_with TERM "$pid" "$S"
eq "SIGTERM: daemon exits 0" 0 "$STOP_RC"
check "SIGTERM: unmounted" not mountpoint -q "$S"
eq "SIGTERM: the node's tensor records are removed" "" "$(rcli --scan --pattern 'tensorfs:tensor:*')"
check "no ring entry failed" not grep -q "io_uring: .*failed" "$T/s.log"
restore_uring
eq "enable_uring is back as it was" "$URING_PREV" "$(cat "$URING_SWITCH")"
finish
