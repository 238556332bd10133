# A delete through a per-user queue removes only what its sender could unlink through the
# mount (issue 15, item 2): write on the directory, and the sticky bit's owner rule.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/quser_lib.sh"
start_redis || exit 1
M=$T/m
quser_mount "$M" --node n1 || exit 1
mkdir "$M/tmp" "$M/pub"; chmod 1777 "$M/tmp"; chmod 777 "$M/pub"
touch "$M/rootfile" "$M/tmp/rootfile"
r=$(usend '{"op":"delete","name":"rootfile"}')
eq "in root's 0755 directory: EACCES" EACCES "$(jfield "$r" error)"
r=$(usend '{"op":"delete","name":"tmp/rootfile"}')
eq "root's tensor in a sticky directory: EPERM" EPERM "$(jfield "$r" error)"
check "both are still there" test -e "$M/rootfile" -a -e "$M/tmp/rootfile"
r=$(usend '{"op":"create","name":"tmp/mine","dtype":"u8","shape":[8]}'); eq "create its own" True "$(jfield "$r" ok)"
r=$(usend '{"op":"delete","name":"tmp/mine"}'); eq "its own in the sticky directory: ok" True "$(jfield "$r" ok)"
touch "$M/pub/rootfile"
r=$(usend '{"op":"delete","name":"pub/rootfile"}')
eq "root's tensor in a 0777 directory: ok, as rm would" True "$(jfield "$r" ok)"
check "gone" test ! -e "$M/pub/rootfile" -a ! -e "$M/tmp/mine"
finish
