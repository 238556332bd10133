# chmod, chown, times and user xattrs on a tensor, in the mount and in its record.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
touch "$M/a"
chmod_follows() { chmod 600 "$M/a" && [ "$(stat -c %a "$M/a")" = 600 ] && [ "$(rcli hget tensorfs:tensor:a mode)" = 600 ]; }
chown_follows() { chown 1234:5678 "$M/a" && [ "$(stat -c %u:%g "$M/a")" = 1234:5678 ]; }
touch_d() { touch -d '2020-01-02 03:04:05' "$M/a" && [ "$(stat -c %Y "$M/a")" = "$(date -d '2020-01-02 03:04:05' +%s)" ]; }
user_set_get() { setfattr -n user.owner -v alice "$M/a" && [ "$(getfattr --only-values -n user.owner "$M/a")" = alice ]; }
user_listed() { getfattr -d "$M/a" | grep -q 'user.owner="alice"'; }
user_removed() { setfattr -x user.owner "$M/a" && ! getfattr -n user.owner "$M/a" 2>/dev/null; }
check "chmod" chmod_follows
check "chown" chown_follows
check "touch -d sets mtime" touch_d
check "user xattr set/get" user_set_get
check "user xattr listed" user_listed
check "user xattr removed" user_removed
finish
