# A daemon run by a normal user (uid 65534 here), as `make run` starts it for a user with
# sudo: it mounts through fusermount3 on a mount point that user owns, with its private
# Redis, and the mount is that user's: the root directory is theirs, so they create,
# write, read and remove tensors and directories there, then unmount with fusermount3 -u
# (issue 32, item 11). The private redis-server, the keeper and the shared-memory
# directory run and live as that user. Mounted again with --allow-other, a third uid
# (65533) works in a directory open to it, and the permissions hold both ways.
#
# The test runs in a mount namespace of its own: there /dev/fuse, where it is not usable
# by that uid as on stock Debian (0666), is a 0666 node of the same device bound over it,
# and /etc/fuse.conf says user_allow_other; the machine's files stay as they are.
if [ -z "${TFS_USER_NS:-}" ]; then
	exec env TFS_USER_NS=1 unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/../lib.sh"
# A normal user mounts through fusermount3 only where it is set-user-ID root (the fuse3
# package installs it so; a copy unpacked without it, as on the GPU machines, is not).
fm=$(command -v fusermount3)
if [ -z "$fm" ] || [ ! -u "$fm" ] || [ "$(stat -c %u "$fm")" != 0 ]; then
	echo "skip - a normal user's mount: fusermount3 (${fm:-missing}) is not set-user-ID root here"
	finish
	exit 0
fi
if ! $NOBODY test -r /dev/fuse -a -w /dev/fuse 2>/dev/null; then
	read -r maj min < <(stat -c '%t %T' /dev/fuse)
	mknod -m 666 "$T/fuse" c $((16#$maj)) $((16#$min)) && mount --bind "$T/fuse" /dev/fuse ||
		{ echo "not ok - cannot make /dev/fuse usable by uid 65534 in a mount namespace"; exit 1; }
fi
# A machine without the fuse3 package (the GPU machines get fusermount3 alone) has no
# /etc/fuse.conf to bind over: part two, which needs user_allow_other, is then skipped.
allow_other=
if [ -e /etc/fuse.conf ]; then
	echo user_allow_other > "$T/fuse.conf"
	chmod 644 "$T/fuse.conf"
	mount --bind "$T/fuse.conf" /etc/fuse.conf ||
		{ echo "not ok - cannot bind a fuse.conf in a mount namespace"; exit 1; }
	allow_other=1
fi
chmod 755 "$T"
U=$T/home
mkdir -p "$U/m"
chown -R 65534:65534 "$U"
M=$U/m
LOG=$U/tensorfs.log
UPID=
cleanup_user() {
	[ -n "$UPID" ] || return 0
	$NOBODY fusermount3 -uz "$M" 2>/dev/null
	kill "$UPID" 2>/dev/null
}
trap 'cleanup_user; [ -n "$WATCHDOG" ] && kill "$WATCHDOG" 2>/dev/null' EXIT
# as_user CMD...: CMD as uid 65534 (a root process may not even look into the mount:
# without allow_other the kernel lets only its owner in).
as_user() { $NOBODY env HOME="$U" "$@"; }

# user_mount [options...]: the daemon as the user, in the foreground, and the wait for
# its mount. Not through as_user, a function: $! is then the daemon's own pid (setpriv
# and env exec).
user_mount() {
	: > "$LOG"
	chown 65534:65534 "$LOG"
	$NOBODY env -u XDG_RUNTIME_DIR HOME="$U" "$TFS" -f --backend host --log "$LOG" "$@" "$M" &
	UPID=$!
	for _ in $(seq 400); do
		as_user mountpoint -q "$M" && break
		kill -0 "$UPID" 2>/dev/null || break
		sleep 0.05
	done
	if ! as_user mountpoint -q "$M"; then
		nok "uid 65534 mounts through fusermount3${*:+ with $*}"
		sed 's/^/      /' "$LOG" 2>/dev/null | tail -20
		exit 1
	fi
	ok "uid 65534 mounts through fusermount3${*:+ with $*}"
}
# user_umount: fusermount3 -u as the user; the daemon exits 0, without a crash.
user_umount() {
	local rc
	check "the user unmounts with fusermount3 -u" as_user fusermount3 -u "$M"
	wait "$UPID"; rc=$?
	UPID=
	eq "the daemon exits 0" 0 "$rc"
	check "the mount is gone" not grep -q " $M " /proc/mounts
	if [ -z "${EXPECT_RESTARTS:-}" ] && grep -q "keeper: the daemon \(died\|exited\)" "$LOG"; then
		nok "the daemon crashed and was restarted"
		grep -B20 "keeper: the daemon" "$LOG" | head -40 | sed 's/^/      /'
	fi
	[ $FAILS -eq 0 ] || sed 's/^/      /' "$LOG" | tail -30
}

check_err "a user's daemon refuses a queue for another user" "gives a queue to its own user only" \
	as_user "$TFS" -f --redis "unix://$T/none.sock" --user-queues 0 "$M"
user_mount
eq "the mount is uid 65534's (mtab's user_id)" "65534" \
	"$(awk -v m="$M" '$2 == m { if (match($4, /user_id=[0-9]+/)) print substr($4, RSTART + 8, RLENGTH - 8) }' /proc/mounts)"
eq "its root directory is the user's" "65534 65534 755" "$(as_user stat -c '%u %g %a' "$M")"

check "the user creates a tensor (touch)" as_user touch "$M/a"
check "the user makes a directory" as_user mkdir "$M/d"
head -c 5000 /dev/urandom > "$T/src"
chmod 644 "$T/src"
check "the user writes a tensor" as_user cp "$T/src" "$M/d/w"
check "the user reads it back" as_user cmp "$T/src" "$M/d/w"
check "the user shapes a tensor" as_user setfattr -n user.tensor.shape -v '[2,3]' "$M/a"
eq "its shape" "[2,3]" "$(as_user getfattr --absolute-names --only-values -n user.tensor.shape "$M/a" 2>&1)"
eq "the user's own, as made" "65534 65534" "$(as_user stat -c '%u %g' "$M/d/w")"
check "the user renames it" as_user mv "$M/d/w" "$M/d/w2"
check "the user's handle maps it (its shared-memory object)" as_user "$SHM_MAP_BIN" "$M/d/w2" dump

keeper=$UPID
daemon=$(pgrep -P "$keeper" -x tensorfs | head -1)
eq "the keeper runs as the user" 65534 "$(ps -o uid= -p "$keeper" | tr -d ' ')"
eq "the daemon runs as the user" 65534 "$(ps -o uid= -p "$daemon" | tr -d ' ')"
rline=$(grep -o "private redis-server (pid [0-9]*) at [^ ]*" "$LOG" | head -1)
rpid=$(echo "$rline" | sed 's/.*pid \([0-9]*\).*/\1/')
rsock=${rline##* at }
eq "the private redis-server runs as the user" 65534 "$(ps -o uid= -p "$rpid" | tr -d ' ')"
eq "its directory is the user's, 0700" "65534 700" "$(stat -c '%u %a' "$(dirname "$rsock")")"
shmdir=$(ls /dev/shm | grep "^tensorfs\.$keeper\." | head -1)
eq "the shared-memory directory is the user's" "65534" "$(stat -c '%u' "/dev/shm/$shmdir" 2>&1)"

# A crash: the user's keeper starts the daemon again, which detaches the dead mount through
# fusermount3 (no mount beneath it without root) and serves the same tensors.
kill -9 "$daemon"
for _ in $(seq 400); do
	d2=$(pgrep -P "$keeper" -x tensorfs | head -1)
	[ -n "$d2" ] && [ "$d2" != "$daemon" ] && as_user mountpoint -q "$M" && as_user stat "$M/d" >/dev/null 2>&1 && break
	sleep 0.05
done
check "after a kill -9 the keeper's new daemon serves the mount" as_user stat "$M/d"
check "the tensor's bytes survived" as_user cmp "$T/src" "$M/d/w2"
eq "one mount there, the user's" 1 "$(grep -c " $M " /proc/mounts)"
EXPECT_RESTARTS=1
check "the user removes a tensor" as_user rm "$M/d/w2"
check "the user removes a directory" as_user rmdir "$M/d"
check "the user removes the other tensor" as_user rm "$M/a"
eq "nothing left in the mount" "" "$(as_user ls -A "$M" 2>&1)"
user_umount
eq "the private redis-server stopped" "" "$(ps -o pid= -p "$rpid" 2>/dev/null | tr -d ' ')"
eq "no shared-memory object left" "" "$(ls /dev/shm | grep "^tensorfs\.$keeper\." || true)"

if [ -z "$allow_other" ]; then
	echo "skip - --allow-other as a normal user: this machine has no /etc/fuse.conf (package fuse3)"
	finish
	exit $((FAILS > 0))
fi

# Part two: --allow-other (user_allow_other in fuse.conf). Another uid's tensors are
# made, though the daemon cannot give their shared-memory objects away, and
# default_permissions keeps each uid to what the modes allow.
EXPECT_RESTARTS=
user_mount --allow-other
OTHER="setpriv --reuid=65533 --regid=65533 --clear-groups"
check_err "another uid cannot create in the user's 0755 root" "Permission denied" $OTHER touch "$M/x"
check "the user opens a directory to all (1777)" as_user mkdir -m 1777 "$M/pub"
check "the user makes a 0600 tensor" as_user bash -c "umask 077; head -c 300 /dev/urandom > '$M/pub/mine'"
check "another uid creates and writes a tensor there" $OTHER cp "$T/src" "$M/pub/theirs"
check "and reads it back" $OTHER cmp "$T/src" "$M/pub/theirs"
eq "it is that uid's" "65533 65533" "$(as_user stat -c '%u %g' "$M/pub/theirs")"
check "the other uid makes its tensor 0600" $OTHER chmod 600 "$M/pub/theirs"
check_err "the user cannot read it" "Permission denied" as_user cat "$M/pub/theirs"
check_err "the other uid cannot read the user's 0600 tensor" "Permission denied" $OTHER cat "$M/pub/mine"
check_err "the other uid cannot remove it (sticky directory)" "Operation not permitted" $OTHER rm -f "$M/pub/mine"
check "the other uid removes its own" $OTHER rm "$M/pub/theirs"
check "the user removes the rest" as_user rm -r "$M/pub"
user_umount
finish
