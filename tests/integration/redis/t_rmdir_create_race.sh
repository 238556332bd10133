# rmdir on one node against creates in that directory on another: no tensor may end up in
# no directory, no entries may outlive their directory (issue 15, item 13). rmdir is one
# script; a create checks its parent right behind its claim and gives the name back when
# the directory went first. RACE_SECONDS (default 4) sets how long the loops run.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
A=$T/a; B=$T/b
mount_tfs "$A" --node n1 || exit 1
mount_tfs "$B" --node n2 || exit 1
secs=${RACE_SECONDS:-4}
rmdirs() { local end=$((SECONDS + secs)); while [ $SECONDS -lt $end ]; do mkdir "$A/d" 2>/dev/null; rmdir "$A/d" 2>/dev/null; done; }
creates() {
	local end=$((SECONDS + secs)) i=0
	while [ $SECONDS -lt $end ]; do i=$((i + 1)); : 2>/dev/null > "$B/d/f$i"; done
}
rmdirs & r=$!
creates & c=$!
wait $r $c
tfs_flush
orphans() {
	local k p bad=0
	for k in $(redis-cli -s "$SOCK" --scan --pattern 'tensorfs:dirents:?*'); do
		p=${k#tensorfs:dirents:}
		[ "$(redis-cli -s "$SOCK" exists "tensorfs:dir:$p")" = 1 ] || { echo "entries of a gone directory: $p"; bad=1; }
	done
	for k in $(redis-cli -s "$SOCK" --scan --pattern 'tensorfs:tensor:*'); do
		p=${k#tensorfs:tensor:}
		local dir=${p%/*} base=${p##*/}
		[ "$dir" = "$p" ] && dir=
		[ -n "$(redis-cli -s "$SOCK" hget "tensorfs:dirents:$dir" "$base")" ] || { echo "a tensor in no directory: $p"; bad=1; }
	done
	return $bad
}
check "no orphaned tensors or entries after ${secs} s of rmdir against creates" orphans
rm -rf "$B/d" 2>/dev/null   # the tensors are n2's: removed where they live
check "everything removable" test ! -e "$A/d"
sleep 0.2
eq "statfs on n1 back to 0" 0 "$(used_bytes "$A")"
eq "statfs on n2 back to 0" 0 "$(used_bytes "$B")"
finish
