# The unit under a real systemd: `systemctl start tensorfs@INSTANCE` mounts (Type=notify:
# it returns once the mount serves), its memory keeper is the unit's main PID, `stop`
# unmounts, ends the daemon and removes its records. Needs systemd as PID 1 (not so in CI
# containers: then it reports skip; docs/options.md gives the same check by hand).
. "$(dirname "$0")/../lib.sh"
cd "$T"
if [ "$(cat /proc/1/comm 2>/dev/null)" != systemd ] || [ ! -d /run/systemd/system ]; then
	echo "skip - the systemd unit: PID 1 is $(cat /proc/1/comm 2>/dev/null || echo unknown), not systemd (docs/options.md: 'As a system service' has the check by hand)"
	finish; exit 0
fi
start_redis || exit 1
M=$T/mnt
inst=$(systemd-escape --path "$M")
unit="tensorfs@$inst.service"
RUN=/run/systemd/system
# Runtime units (/run: gone at reboot), the daemon of this build, options in a drop-in
# (which first empties EnvironmentFile=: those files would override Environment=).
sed "s|@BINDIR@|$(dirname "$TFS")|g" "$ROOT/systemd/tensorfs@.service.in" > "$RUN/tensorfs@.service"
mkdir -p "$RUN/$unit.d"
printf '[Service]\nEnvironmentFile=\nEnvironment="TENSORFS_OPTS=--redis %s --node sd --log %s/sd.log"\n' "$URL" "$T" \
	> "$RUN/$unit.d/test.conf"
cleanup_units() { systemctl stop "$unit" 2>/dev/null; rm -rf "$RUN/tensorfs@.service" "$RUN/$unit.d"; systemctl daemon-reload; }
trap 'cleanup_units; fusermount3 -uz "$M" 2>/dev/null; [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null' EXIT
systemctl daemon-reload
check "systemctl start $unit" timeout 60 systemctl start "$unit"
check "the mount serves when start returns" bash -c "mountpoint -q '$M' && ls '$M' >/dev/null"
check "the unit is active" systemctl is-active -q "$unit"
main=$(systemctl show -p MainPID --value "$unit")
pid=$(getfattr --only-values -n user.tensorfs.stats "$M" 2>/dev/null | grep -o '"pid":[0-9]*' | cut -d: -f2)
eq "its main PID is the keeper of the daemon that serves" "$(ps -o ppid= -p "${pid:-1}" | tr -d ' ')" "$main"
check "a tensor on it" bash -c "touch '$M/x' && setfattr -n user.tensor.shape -v '[16]' '$M/x'"
eq "its record is in Redis" 16 "$(rcli hget tensorfs:tensor:x bytes)"
check "systemctl stop $unit" timeout 90 systemctl stop "$unit"
check "stop unmounted it" bash -c "! mountpoint -q '$M'"
check "the daemon is gone" bash -c "! kill -0 ${pid:-none} 2>/dev/null"
eq "the unit is inactive (not failed)" inactive "$(systemctl is-active "$unit")"
eq "its records are removed" "" "$(rcli --scan --pattern 'tensorfs:tensor:*')"
eq "no shared memory is left" "" "$(ls /dev/shm | grep "^tensorfs\.${main:-none}\." || true)"
cleanup_units
trap - EXIT
finish
