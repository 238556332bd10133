# -s: libfuse's single-threaded loop instead of the daemon's workers (fs/transport/loop.c) serves
# reads and writes too.
. "$(dirname "$0")/../lib.sh"
one_mount --node s1 --prefix ps --queue qs -s
head -c 3000000 /dev/urandom > "$T/r3"
cp_cmp() { cp "$T/r3" "$M/x" && cmp "$T/r3" "$M/x"; }
check "-s: 3 MB written and read back" cp_cmp
check "-s: no worker threads of ours" not grep -q 'FUSE worker threads' "$T/m.log"
finish
