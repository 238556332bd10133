# Starting and stopping: background mode with the private redis-server, SIGTERM and SIGINT
# unmount cleanly (exit 0, records gone, memory freed), -o options as /etc/fstab passes them.
. "$(dirname "$0")/lib.sh"
cd "$T"

# Background, no --redis: the daemon forks, starts its own redis-server, mounts.
B=$T/bg
mkdir -p "$B"
check "background start returns 0 with the mount up" bash -c "'$TFS' --log '$T/bg.log' '$B' && mountpoint -q '$B'"
sock=$(grep -o "private redis-server (pid [0-9]*) at [^ ]*" "$T/bg.log" | awk '{print $NF}')
rpid=$(grep -o "private redis-server (pid [0-9]*)" "$T/bg.log" | grep -o "[0-9]*")
check "private redis-server is logged with its socket" test -S "$sock"
check "tensors work on the private Redis" bash -c "echo hi > '$B/a' && [ \"\$(cat '$B/a')\" = hi ]"
eq "its record is in the private Redis" 3 "$(tfs_flush; redis-cli -s "$sock" hget tensorfs:tensor:a bytes)"
check "private Redis listens on no TCP port" bash -c "[ \"\$(redis-cli -s '$sock' config get port | tail -1)\" = 0 ]"
dpid=$(pgrep -f "^$TFS --log $T/bg.log" | head -1)
fusermount3 -u "$B"
for _ in $(seq 100); do kill -0 "$dpid" 2>/dev/null || break; sleep 0.05; done
check "fusermount3 -u: the daemon exits" bash -c "! kill -0 $dpid 2>/dev/null"
for _ in $(seq 100); do kill -0 "$rpid" 2>/dev/null || break; sleep 0.05; done
check "fusermount3 -u: the private redis-server is stopped" bash -c "! kill -0 $rpid 2>/dev/null"
check "its runtime directory is removed" bash -c "! test -e '$(dirname "$sock")'"

start_redis || exit 1
for sig in TERM INT; do
	S=$T/sig$sig
	mkdir -p "$S"
	# A non-interactive shell starts background jobs with SIGINT ignored: undo that, as
	# a terminal's Ctrl-C would find it.
	env --default-signal=INT "$TFS" -f --redis "$URL" --node "n$sig" --log "$T/sig$sig.log" "$S" &
	pid=$!
	for _ in $(seq 100); do mountpoint -q "$S" && break; sleep 0.05; done
	head -c 100000 /dev/urandom > "$S/t"
	mkdir "$S/d"
	kill -$sig "$pid"
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	if kill -0 "$pid" 2>/dev/null; then
		nok "SIG$sig: daemon still running"
		fusermount3 -uz "$S"; kill -9 "$pid"
	fi
	wait "$pid"; rc=$?
	eq "SIG$sig: daemon exits 0" 0 "$rc"
	check "SIG$sig: unmounted" bash -c "! mountpoint -q '$S'"
	eq "SIG$sig: the node's tensor records are removed" "" "$(rcli --scan --pattern 'tensorfs:tensor:*')"
	eq "SIG$sig: no shared memory left" "" "$(ls /dev/shm | grep "^tensorfs\.$pid\." || true)"
	rcli del tensorfs:dir:d tensorfs:dirents: >/dev/null
done
# make LOCK_STATS=1 (the ASan build of make test has it): the namespace lock's figures are
# logged at unmount, and only then.
if grep -q "namespace lock: %" "$TFS"; then
	check "LOCK_STATS build: the namespace lock's figures are logged at unmount" \
		grep -Eq "namespace lock: [1-9][0-9]* acquisitions, held [0-9]+ us in all \(mean [0-9.]+ us" "$T/sigTERM.log"
else
	check "plain build: no lock figures logged" bash -c "! grep -q 'namespace lock:' '$T/sigTERM.log'"
fi

# fstab style: every option as -o key=value
O=$T/fstab
mkdir -p "$O"
"$TFS" -f -o "redis=$URL,node=nf,prefix=pf,queue=qf,max-bytes=1M,threads=3,log=$T/fstab.log" "$O" &
MNT_PID[$O]=$!
for _ in $(seq 100); do mountpoint -q "$O" && break; sleep 0.05; done
check "-o key=value options mount" mountpoint -q "$O"
check "-o threads applies" grep -q "serving with 3 FUSE worker threads" "$T/fstab.log"
echo x > "$O/a"
eq "-o prefix and node apply" nf "$(rcli hget pf:tensor:a node)"
check_err "-o max-bytes applies" "No space left" setfattr -n user.tensor.shape -v '[2000000]' "$O/a"
r=$(rcli lpush qf '{"op":"get","name":"a","pid":1,"id":"1","reply":"fr"}' >/dev/null; rcli brpop fr 3 | tail -1)
check "-o queue applies" bash -c "echo '$r' | grep -q '\"id\":\"1\"'"

# -s: libfuse's single-threaded loop instead of the daemon's workers (fs/loop.c)
mount_tfs "$T/single" --node s1 --prefix ps --queue qs -s || exit 1
head -c 3000000 /dev/urandom > "$T/r3"
check "-s: 3 MB written and read back" bash -c "cp '$T/r3' '$T/single/x' && cmp '$T/r3' '$T/single/x'"
check "-s: no worker threads of ours" bash -c "! grep -q 'FUSE worker threads' '$T/single.log'"
cd /
finish
