# The directory cache (fs/store/dircache.c) follows changes made in Redis by anyone else (Redis
# client tracking): a directory record and an entry edited by hand show in the mount.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
mkdir "$M/cd"; stat "$M/cd" >/dev/null; ls "$M/cd" >/dev/null
mode_700() { [ "$(stat -c %a "$M/cd")" = 700 ]; }
rcli hset tensorfs:dir:cd mode 700 >/dev/null
check "a directory record edited in Redis shows in the mount" soon mode_700
rcli hset tensorfs:dir:cd/sub mode 755 uid 0 gid 0 ctime 1 mtime 1 >/dev/null
rcli hset tensorfs:dirents:cd sub d >/dev/null
check "an entry added in Redis shows in the mount" soon test -d "$M/cd/sub"
rcli hdel tensorfs:dirents:cd sub >/dev/null
check "an entry removed in Redis goes from the mount" soon test ! -e "$M/cd/sub"
rcli del tensorfs:dir:cd/sub >/dev/null
finish
