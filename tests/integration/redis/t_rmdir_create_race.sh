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
	while [ $SECONDS -lt $end ] && [ $i -lt 2000 ]; do i=$((i + 1)); : 2>/dev/null > "$B/d/f$i"; done
}
rmdirs & r=$!
creates & c=$!
wait $r $c
tfs_flush
# One script over the whole keyspace: entries hashes whose directory is gone, tensor
# records whose name is in no directory's entries.
orphans_lua="local bad = {}
for _, k in ipairs(redis.call('KEYS', ARGV[1] .. ':dirents:?*')) do
  local p = string.sub(k, #ARGV[1] + 10)
  if redis.call('EXISTS', ARGV[1] .. ':dir:' .. p) == 0 then table.insert(bad, 'entries of a gone directory: ' .. p) end
end
for _, k in ipairs(redis.call('KEYS', ARGV[1] .. ':tensor:*')) do
  local p = string.sub(k, #ARGV[1] + 9)
  local dir, base = string.match(p, '^(.*)/([^/]*)$')
  if not dir then dir = ''; base = p end
  if not redis.call('HGET', ARGV[1] .. ':dirents:' .. dir, base) then table.insert(bad, 'a tensor in no directory: ' .. p) end
end
return bad"
orphans() {
	local out
	out=$(redis-cli -s "$SOCK" eval "$orphans_lua" 0 tensorfs)
	[ -z "$out" ] || { echo "$out" | head; return 1; }
}
check "no orphaned tensors or entries after ${secs} s of rmdir against creates" orphans
rm -rf "$B/d" 2>/dev/null   # the tensors are n2's: removed where they live
check "everything removable" test ! -e "$A/d"
sleep 0.2
eq "statfs on n1 back to 0" 0 "$(used_bytes "$A")"
eq "statfs on n2 back to 0" 0 "$(used_bytes "$B")"
finish
