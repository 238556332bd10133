# libtensorfs: a cold open by path reads the tensor's metadata by path (or finds it
# remembered) and maps the tensor while a helper thread opens its file
# (lib/open_ahead.c); a process's first open of a path reads the metadata with no stat
# before it. What the open hands out is always the tensor behind the descriptor, even
# while the name is replaced over and over.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
A=$T/a
mount_tfs "$A" || exit 1
cold() { "$HELPERS/tfs_client_tool" cold "$@" 2>&1 | paste -sd'|'; }
printf '\4\4\4\4' > "$A/h"
eq "each open maps while the helper opens, the first one too (metadata read by path)" \
	"ahead 5 bad 0|done" "$(cold "$A/h" 5)"
eq "each open as the process's first of the path: by the metadata read, no stat before" \
	"ahead 5 first 5 bad 0|done" "$(cold "$A/h" 5 first)"
eq "a relative path is opened by the caller (the helper's directory could differ)" \
	"ahead 0 bad 0|done" "$(cd "$A" && cold h 5)"
if [ "$BACKEND" = host ]; then
	eq "a child forked after the helper started gets one of its own" \
		"ahead 3 bad 0|child ahead 3 bad 0|done" "$(cold "$A/h" 3 fork)"
else
	echo "skip - a child forked after the helper started gets one of its own: CUDA cannot" \
		"be used in a child forked after its parent used it; the host backend checks it"
fi
chmod 0600 "$A/h"
if [ "$(id -u)" = 0 ]; then
	# root opens anyway; the mode check is another user's, in perm/.
	eq "a tensor made unreadable since is still root's to open" "ahead 5 bad 0|done" "$(cold "$A/h" 5)"
fi
# The metadata read by path is of the file stat found, even when the name is swapped
# with another's and back between the stat and the open: the tool swaps p and q around
# its every getxattr.
printf '\1' > "$A/p"
printf '\2\2' > "$A/q"
eq "p swapped with q and back around the read of its metadata: its own tensor" \
	"u8 [1] 1 $BACKEND ro|its own|done" "$("$HELPERS/tfs_client_tool" swapped "$A/p" "$A/q" 2>&1 | paste -sd'|')"
eq "and the names are where they were" "1 2 2" "$(od -An -tu1 "$A/p" "$A/q" | xargs)"
# A racer replaces r by renames of tensors whose first byte is their length, while the
# reader opens and closes it: no open may pair a descriptor with another tensor's
# metadata (the stat before the open sees one tensor, the open another), and none may
# fail: a rename replaces the name atomically (names/t_rename_open.sh).
printf '\1' > "$A/r"
/usr/bin/python3 - "$A" "$T/racing" "$T/stop" > "$T/racer.out" 2>&1 <<'PY' &
import os, sys, time
d = sys.argv[1]
end = time.time() + 60
i = 0
while time.time() < end and not os.path.exists(sys.argv[3]):
    n = i % 60 + 1
    with open(os.path.join(d, "tmp"), "wb") as f:
        f.write(bytes([n]) * n)
    os.rename(os.path.join(d, "tmp"), os.path.join(d, "r"))
    if i == 0:
        open(sys.argv[2], "w").close()
    i += 1
print("replaced", i)
PY
racer=$!
# The reader starts once the racer does (python takes a while to start).
for _ in $(seq 400); do [ -e "$T/racing" ] && break; sleep 0.05; done
out=$(cold "$A/r" 3000)
first=$(cold "$A/r" 3000 first)
touch "$T/stop"
wait "$racer"
echo "# $out; $first; $(cat "$T/racer.out")"
eq "3000 cold opens while r is replaced: each tensor is the one its descriptor names" \
	"bad 0" "$(echo "$out" | grep -o 'bad [0-9]*')"
eq "and none failed with ENOENT" "" "$(echo "$out" | grep -o 'gone [0-9]*')"
check "and most of them were mapped while the helper opened" \
	test "$(echo "$out" | sed -n 's/^ahead \([0-9]*\).*/\1/p')" -gt 100
eq "3000 first opens (no stat) while r is replaced: each tensor its descriptor's" \
	"bad 0" "$(echo "$first" | grep -o 'bad [0-9]*')"
eq "and none failed with ENOENT" "" "$(echo "$first" | grep -o 'gone [0-9]*')"
check "and many went by the metadata read" \
	test "$(echo "$first" | sed -n 's/.* first \([0-9]*\).*/\1/p')" -gt 100
check "the racer replaced r many times meanwhile" \
	test "$(sed -n 's/^replaced //p' "$T/racer.out")" -gt 50
finish
