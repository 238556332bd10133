# make install puts the daemon, tensorctl, both man pages, the systemd unit (ExecStart
# naming the installed daemon) and the options file under DESTDIR; make uninstall takes
# away all it put, and leaves an options file the administrator changed.
. "$(dirname "$0")/../lib.sh"
cd "$T"
D=$T/dest
# The sanitizer flags of the build under test, so that make finds its objects up to date.
flags=()
[[ "$BUILD" == *asan* ]] && flags=(SANITIZE=1 OPTIMIZATION=-O1 LOCK_STATS=1)
mk() { make -s -C "$ROOT" O="$BUILD" "${flags[@]}" DESTDIR="$D" PREFIX=/usr/local "$@"; }
check "make install DESTDIR=... PREFIX=/usr/local" mk install
for f in bin/tensorfs bin/tensorctl share/man/man8/tensorfs.8 share/man/man1/tensorctl.1 \
	lib/systemd/system/tensorfs@.service; do
	check "installed: /usr/local/$f" test -s "$D/usr/local/$f"
done
check "installed: /etc/default/tensorfs" test -s "$D/etc/default/tensorfs"
# The options file may name a Redis password (issue 32, item 4): no other user reads it.
chmod 755 "$T"
echo 'TENSORFS_OPTS="--redis unix://admin:Zq8pw-opts-4711@/run/r.sock"' >> "$D/etc/default/tensorfs"
eq "the options file is installed 0600" 600 "$(stat -c %a "$D/etc/default/tensorfs")"
check "uid 65534 cannot read the options file" not $NOBODY cat "$D/etc/default/tensorfs"
chmod 644 "$D/etc/default/tensorfs"
check "make install again" mk install
eq "an options file kept from before is made 0600" 600 "$(stat -c %a "$D/etc/default/tensorfs")"
check "and keeps what the administrator wrote" grep -q Zq8pw-opts-4711 "$D/etc/default/tensorfs"
sed -i '/Zq8pw-opts-4711/d' "$D/etc/default/tensorfs"
U=$D/usr/local/lib/systemd/system/tensorfs@.service
check "the unit runs the installed daemon on the instance's path" \
	grep -qx 'ExecStart=/usr/local/bin/tensorfs $TENSORFS_OPTS %f' "$U"
check "the unit is Type=notify with NotifyAccess=all" \
	bash -c "grep -qx Type=notify '$U' && grep -qx NotifyAccess=all '$U'"
if command -v groff >/dev/null; then
	check "tensorfs.8 formats without a warning" bash -c "! groff -man -ww -z '$D/usr/local/share/man/man8/tensorfs.8' 2>&1 | grep ."
else
	echo "skip - tensorfs.8 formats without a warning: groff is not installed"
fi
check "tensorfs.8 names every option of the daemon's --help" bash -c "
	for o in \$('$TFS' --help | grep -o '^    --[a-z-]*' | sed 's/^ *//'); do
		grep -q -- \"\$(echo \"\$o\" | sed 's/-/\\\\\\\\-/g')\" '$ROOT/docs/tensorfs.8' || { echo \"missing \$o\"; exit 1; }
	done"
if command -v systemd-analyze >/dev/null; then
	# The instance of a real path, with ExecStart rewritten to a daemon that exists here;
	# its Documentation= (man:tensorfs(8)) is looked up in the man pages just installed.
	mkdir -p units
	sed "s|/usr/local/bin/tensorfs|$TFS|" "$U" > "units/tensorfs@.service"
	check "systemd-analyze verify accepts the unit" bash -c \
		"MANPATH='$D/usr/local/share/man:' systemd-analyze verify '$T/units/tensorfs@mnt-tensors.service' 2>&1 | (! grep .)"
else
	echo "skip - systemd-analyze verify: systemd-analyze is not installed"
fi
echo "# changed" >> "$D/etc/default/tensorfs"
check "make uninstall" mk uninstall
eq "it leaves only the changed options file" "$D/etc/default/tensorfs" "$(find "$D" -type f -o -type l)"
rm "$D/etc/default/tensorfs"
check "install again, then uninstall: nothing is left" bash -c "$(declare -f mk); D='$D' ROOT='$ROOT' BUILD='$BUILD'; flags=(${flags[*]}); mk install && mk uninstall"
eq "no file left under DESTDIR" "" "$(find "$D" -type f -o -type l)"
finish
