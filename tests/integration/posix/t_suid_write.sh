# A write by a user other than root clears set-user-ID (pjdfstest chmod/12): with direct
# I/O the kernel leaves it to the filesystem.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --allow-other || exit 1
chmod 0755 "$T"; chmod 0777 "$M"   # mktemp made $T 0700
touch "$M/f"; chmod 4777 "$M/f"
eq "mode is 4777" 4777 "$(stat -c %a "$M/f")"
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "echo x >> '$M/f'"
eq "after another user's write: 777" 777 "$(stat -c %a "$M/f")"
touch "$M/g"; chmod 2775 "$M/g"
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "echo x >> '$M/g'" 2>/dev/null
touch "$M/h"; chmod 2777 "$M/h"
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "echo x >> '$M/h'"
eq "set-group-ID with group execute: cleared" 777 "$(stat -c %a "$M/h")"
touch "$M/r"; chmod 4777 "$M/r"; echo x >> "$M/r"
eq "root's write keeps it (CAP_FSETID)" 4777 "$(stat -c %a "$M/r")"
finish
