# User attributes are bounded (issue 32, item 8): the user.* names and values of one file
# or directory stop at max_xattr_file bytes (ENOSPC), those of all of one owner's at
# max_xattr_user (EDQUOT, never for root), so a user who tries to store 32 MiB of
# attributes grows neither the daemon (whose mirror keeps a copy) nor Redis by that.
. "$(dirname "$0")/../lib.sh"
other_uid_mount --node n1 --backend host -o max_xattr_file=64K -o max_xattr_user=256K
chmod 777 "$M"
rss() { awk '/^VmRSS/ {print $2 * 1024}' "/proc/$(daemon_pid "$M")/status"; }
redis_mem() { rcli info memory | awk -F: '/^used_memory:/ {print $2}' | tr -d '\r'; }
# xset FILE NAME BYTES: as uid 65534, user.NAME set to BYTES bytes; prints "ok" or the error
xset() {
	$NOBODY /usr/bin/python3 -c 'import os, sys
try:
    os.setxattr(sys.argv[1], "user." + sys.argv[2], b"v" * int(sys.argv[3])); print("ok")
except OSError as e:
    print(os.strerror(e.errno))' "$@"
}
rss0=$(rss); mem0=$(redis_mem)
$NOBODY touch "$M/f"
eq "32 KiB on a file" ok "$(xset "$M/f" a 32768)"
eq "32 KiB more: past 64 KiB, ENOSPC" "No space left on device" "$(xset "$M/f" b 32768)"
eq "30 KiB more fits" ok "$(xset "$M/f" b 30720)"
eq "a value replaced by a smaller one" ok "$(xset "$M/f" a 100)"
eq "then 32 KiB fits again" ok "$(xset "$M/f" c 32000)"
check "removing one" $NOBODY setfattr -x user.c "$M/f"
eq "its bytes are free again" ok "$(xset "$M/f" d 32000)"
$NOBODY mkdir "$M/dir"
eq "40 KB on a directory" ok "$(xset "$M/dir" a 40000)"
eq "40 KB more: past 64 KiB, ENOSPC" "No space left on device" "$(xset "$M/dir" b 40000)"
check "removed" $NOBODY setfattr -x user.a "$M/dir"
# uid 65534's files hold 62.8 KiB (f); three more of 60 KiB reach 243 KiB, a fourth EDQUOT.
for i in 1 2 3 4; do $NOBODY touch "$M/g$i"; done
out=$(for i in 1 2 3 4; do xset "$M/g$i" a 61440; done | tr '\n' ,)
eq "one owner's files: 256 KiB in all, then EDQUOT" "ok,ok,ok,Disk quota exceeded," "$out"
eq "on its directory too" "Disk quota exceeded" "$(xset "$M/dir" a 20000)"
check "root may set on a file of uid 65534" setfattr -n user.r -v small "$M/g4"
check_err "but not past its owner's quota" "Disk quota exceeded" setfattr -n user.r -v "$(head -c 30000 /dev/zero | tr '\0' x)" "$M/g4"
# Root is bound per file only.
for i in 1 2 3 4 5 6; do touch "$M/r$i"; setfattr -n user.a -v "$(head -c 60000 /dev/zero | tr '\0' x)" "$M/r$i" || nok "root's file r$i"; done
ok "root's six files of 60 KB each"
check "chown of g1 to root gives uid 65534 room" chown 0 "$M/g1"
eq "for g4's 60 KiB now" ok "$(xset "$M/g4" a 61440)"

# A flood: 512 files, 64 KiB asked for on each, as uid 65534.
$NOBODY /usr/bin/python3 -c 'import os, sys
refused = 0
for i in range(512):
    p = "%s/flood%d" % (sys.argv[1], i)
    os.close(os.open(p, os.O_CREAT | os.O_WRONLY))
    for n in range(2):
        try:
            os.setxattr(p, "user.x%d" % n, b"y" * 32768)
        except OSError:
            refused += 1
print(refused)' "$M" > "$T/refused"
check "the flood was refused (most of it: $(cat "$T/refused") of 1024)" test "$(cat "$T/refused")" -ge 1000
rss1=$(rss); mem1=$(redis_mem)
# ASan's quarantine keeps what the daemon freed (each request's copy of a value), so its
# RSS says nothing about what the daemon holds.
if [[ "$BUILD" == *asan* ]]; then echo "# daemon grew by $(( (rss1 - rss0) >> 10 )) KiB (ASan: not checked)"
else check "the daemon grew by less than 8 MiB ($(( (rss1 - rss0) >> 10 )) KiB)" test $((rss1 - rss0)) -lt $((8 << 20)); fi
check "Redis grew by less than 8 MiB ($(( (mem1 - mem0) >> 10 )) KiB)" test $((mem1 - mem0)) -lt $((8 << 20))
check "rm of it all" rm -rf "$M"/*
finish
