# kill -9 of a daemon serving over io_uring (-o io_uring, enable_uring Y), three times under
# load: the keeper's new daemon mounts, asks for the ring again and serves over it, and no
# tensor is lost or changed. The dead daemon's rings die with its process: nothing hangs.
# enable_uring is global: put back on every way out.
# tfs-test: alone (it sets the fuse module's enable_uring, which every mount of the machine shares)
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
enable_uring Y
one_mount -o io_uring
mkdir -p "$M/keep" "$M/busy"
for i in 0 1 2 3; do head -c $(( (i + 1) * 700000 )) /dev/urandom > "$M/keep/k$i"; done
sums() { (cd "$M/keep" && md5sum k*) 2>&1; }
before=$(sums)
pids=()
for w in 1 2; do churn "$M/busy" $w 65536 16 & pids+=($!); done
served=0 bad=0
for c in 1 2 3; do
	sleep 0.3
	kill9_and_serve "$M"; ok=$?
	[ $ok = 2 ] && { nok "crash $c: no daemon to kill"; break; }
	[ $ok = 0 ] || { nok "crash $c: the mount did not serve again within 30 s"; break; }
	[ "$(sums)" = "$before" ] || bad=$((bad + 1))
	n=$(jfield "$(getfattr --only-values -n user.tensorfs.stats "$M" 2>/dev/null)" uring_requests)
	[ "$n" -gt 0 ] 2>/dev/null && served=$((served + 1))
done
touch "$T/stop"
wait "${pids[@]}"
eq "after each crash the new daemon serves over the rings" 3 "$served"
eq "the tensors kept their bytes through every crash" 0 "$bad"
eq "each daemon asked for the ring" 4 "$(grep -c "io_uring: serving over" "$T/m.log")"
rm -rf "$M/keep" "$M/busy"
umount_tfs "$M"
restore_uring
eq "enable_uring is back as it was" "$URING_PREV" "$(cat "$URING_SWITCH")"
finish
