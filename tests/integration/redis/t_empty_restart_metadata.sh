# Redis restarted empty (no persistence): what this node knew is written back, not reset.
# Directory modes, owners and dtype defaults, empty directories it made, the user.*
# attributes of its directories and tensors; access is never widened.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
mkdir -m 0750 "$M/d" && chown 65534:65534 "$M/d"
setfattr -n user.tensor.dtype -v int16 "$M/d"
setfattr -n user.tag -v dir-note "$M/d"
mkdir -p "$M/e/f"                                      # empty directories
chmod 0700 "$M/e/f"
echo data > "$M/d/a"
setfattr -n user.note -v tensor-note "$M/d/a"
chmod 0755 "$M"
mkdir -m 0711 "$M/r1" && setfattr -n user.tag -v moved "$M/r1" && mv "$M/r1" "$M/r2"
mkdir "$M/gone" && rmdir "$M/gone"
mkdir "$M/many"    # more fields than one Lua call may take as arguments (8000)
/usr/bin/python3 -c 'import os, sys
for i in range(4500): os.setxattr(sys.argv[1], "user.a%d" % i, b"%d" % i)' "$M/many"
ino_d=$(stat -c %i "$M/d")
rcli shutdown nosave >/dev/null 2>&1
wait "$REDIS_PID" 2>/dev/null; REDIS_PID=
start_redis || exit 1
restored() { [ "$(redis-cli -s "$SOCK" exists tensorfs:tensor:d/a tensorfs:dir:e/f)" = 2 ]; }
for _ in $(seq 200); do restored && break; sleep 0.1; done
check "Redis back (empty): records rewritten" restored
eq "the directory's mode and owner come back" "750 65534:65534" "$(stat -c '%a %u:%g' "$M/d")"
eq "the directory's inode number is kept" "$ino_d" "$(stat -c %i "$M/d")"
eq "the directory's dtype default comes back" i16 "$(xget "$M/d" dtype)"
eq "the directory's user attribute comes back" dir-note \
	"$(getfattr --only-values -n user.tag "$M/d" 2>/dev/null)"
eq "the tensor's user attribute comes back" tensor-note \
	"$(getfattr --only-values -n user.note "$M/d/a" 2>/dev/null)"
eq "the tensor reads" data "$(cat "$M/d/a")"
eq "empty directories come back" "e f" "$(echo $(ls "$M" | grep -x e) $(ls "$M/e" 2>&1))"
eq "an empty directory's mode comes back" 700 "$(stat -c %a "$M/e/f" 2>&1)"
eq "its parent counts it (st_nlink)" 3 "$(stat -c %h "$M/e" 2>&1)"
eq "a renamed directory comes back under its new name" "711 moved" \
	"$(stat -c %a "$M/r2" 2>&1) $(getfattr --only-values -n user.tag "$M/r2" 2>/dev/null)"
check "not under its old name" not [ -e "$M/r1" ]
check "a removed directory does not come back" not [ -e "$M/gone" ]
eq "a directory with 4500 attributes keeps them all" 4500 \
	"$(getfattr -d -m '^user\.a' "$M/many" 2>/dev/null | grep -c '^user\.a')"
check "new names work in a restored directory" sh -c "echo x > '$M/e/f/n'"
check "the root record is back" [ "$(rcli exists tensorfs:dir:)" = 1 ]
finish
