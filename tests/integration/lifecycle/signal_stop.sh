# Sourced by t_sigterm_unmounts.sh and t_sigint_unmounts.sh with SIG set: the daemon
# stopped by SIG exits 0, unmounted, its records removed and its memory freed.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
S=$T/sig$SIG
mkdir -p "$S"
# A non-interactive shell starts background jobs with SIGINT ignored: undo that, as
# a terminal's Ctrl-C would find it.
env --default-signal=INT "$TFS" -f --redis "$URL" --node "n$SIG" --log "$T/sig$SIG.log" "$S" &
pid=$!
for _ in $(seq 400); do mountpoint -q "$S" && break; sleep 0.05; done
head -c 100000 /dev/urandom > "$S/t"
mkdir "$S/d"
stop_with "$SIG" "$pid" "$S"
eq "SIG$SIG: daemon exits 0" 0 "$STOP_RC"
check "SIG$SIG: unmounted" not mountpoint -q "$S"
eq "SIG$SIG: the node's tensor records are removed" "" "$(rcli --scan --pattern 'tensorfs:tensor:*')"
eq "SIG$SIG: no shared memory left" "" "$(ls /dev/shm | grep "^tensorfs\.$pid\." || true)"
