# Shared by the two-holder tests (t_holders_*.sh, fs/mem/keeper/handover.h): the keeper and
# the daemon each hold every tensor's memory, and whichever survives the other's SIGKILL
# starts it again. Sourced after lib.sh. The keeper that replaces a dead one is nobody's
# child, so processes are found by name and by the mount point in their command line.

# proc_of NAME DIR: the pid of the process called NAME (tensorfs, tensorfs-keeper) whose
# command line names DIR.
proc_of() {
	local p
	for p in $(pgrep -x "$1"); do
		{ tr '\0' '\n' < "/proc/$p/cmdline"; } 2>/dev/null | grep -qxF "$2" && { echo "$p"; return 0; }
	done
	return 1
}
keeper_of() { proc_of tensorfs-keeper "$1"; }

# A mount whose first keeper is gone is no longer in MNT_PID (lib.sh's exit trap would
# signal a pid that may be reused): HOLDER_MOUNTS has it, and the exit trap detaches it,
# which ends its daemon and the keeper that replaced the first one.
HOLDER_MOUNTS=()
holders_guard() {
	local prev
	prev=$(trap -p EXIT)
	prev=${prev#"trap -- '"}
	eval "trap -- 'for d in \"\${HOLDER_MOUNTS[@]}\"; do fusermount3 -uz \"\$d\" 2>/dev/null; done; $prev"
}
holders_guard
daemon_of() { proc_of tensorfs "$1"; }

# holders_setup DIR: tensors of known bytes and metadata, one held through the queue
# (HOLDER the holding process), and their snapshot (BEFORE).
declare -A BEFORE
NAMES=()
holders_setup() {
	local m=$1 i f n
	client_tools
	mkdir -p "$m/a/b"
	for i in $(seq 0 9); do
		case $((i % 3)) in
		0) f=t$i; n=4096 ;;
		1) f=a/t$i; n=$(( (1 << 20) + i )) ;;
		2) f=a/b/t$i; n=$((i * 1000 + 1)) ;;
		esac
		head -c "$n" /dev/urandom > "$m/$f"
		NAMES+=("$f")
	done
	setfattr -n user.tensor.dtype -v f32 "$m/t0"
	setfattr -n user.tensor.shape -v "[32,32]" "$m/t0"
	chmod 0640 "$m/a/t1"
	setfattr -n user.note -v kept "$m/a/b/t2"
	for f in "${NAMES[@]}"; do BEFORE[$f]=$(holders_snap "$m" "$f"); done
	sleep 600 & HOLDER=$!
	local r
	r=$(qsend "{\"op\":\"get\",\"name\":\"a/t4\",\"pid\":$HOLDER,\"node\":\"n1\"}")
	check "a/t4 held through the queue" bash -c "echo '$r' | grep -q '\"ok\":true'"
	sync "$m"
}
holders_snap() {
	echo "$(md5sum < "$1/$2" | cut -c1-32) $(stat -c '%i %s %a %u' "$1/$2") $(xget "$1/$2" ipc_handle | md5sum | cut -c1-8) $(xget "$1/$2" dtype) $(xget "$1/$2" shape)"
}

# holders_check DIR WHAT: every tensor as before, read through the mount and opened by a
# new process with libtensorfs (its handle's name, or the handle socket where a sweep of a
# tensorfs that knows no marks removed the name); the user attribute and the hold.
holders_check() {
	local m=$1 what=$2 same=0 mapped=0 f a
	for f in "${NAMES[@]}"; do
		a=$(holders_snap "$m" "$f")
		if [ "$a" = "${BEFORE[$f]}" ]; then same=$((same + 1)); else echo "    # $f: ${BEFORE[$f]} -> $a"; fi
		[ "$("$TOOL" read "$m/$f" 0 "$(stat -c %s "$m/$f")" | head -1 | tr -d '\n' | md5sum)" = \
		  "$(od -An -v -tx1 < "$m/$f" | tr -d ' \n' | md5sum)" ] && mapped=$((mapped + 1))
	done
	eq "$what: every tensor has its bytes, name, inode, size, mode, owner, handle, dtype and shape" "${#NAMES[@]}" "$same"
	eq "$what: a new process opens every tensor (tfs_open) and reads its bytes" "${#NAMES[@]}" "$mapped"
	eq "$what: the user attribute" kept "$(getfattr --only-values -n user.note "$m/a/b/t2")"
	eq "$what: the queue hold still counts" 2 "$(xget "$m/a/t4" refcount)"
}

# kill_keeper DIR: SIGKILL of DIR's keeper, then waits up to 60 s for another keeper (the
# daemon starts it). 0, or 1 when none came.
kill_keeper() {
	local k k2 log=$T/$(basename "$1").log n
	n=$(grep -c "took over" "$log")
	k=$(keeper_of "$1") || return 1
	kill -9 "$k"
	[ "$k" = "${MNT_PID[$1]:-}" ] && { wait "$k" 2>/dev/null; unset "MNT_PID[$1]"; HOLDER_MOUNTS+=("$1"); }
	for _ in $(seq 1200); do
		k2=$(keeper_of "$1") && [ "$k2" != "$k" ] && [ "$(grep -c "took over" "$log")" -gt "$n" ] && return 0
		sleep 0.05
	done
	return 1
}
# kill_daemon DIR: SIGKILL of DIR's daemon, then waits up to 60 s for a new one serving.
kill_daemon() {
	local d d2 log=$T/$(basename "$1").log n
	n=$(grep -c "adopted" "$log")
	d=$(daemon_of "$1") || return 1
	kill -9 "$d"
	for _ in $(seq 1200); do
		d2=$(daemon_of "$1") && [ "$d2" != "$d" ] && mountpoint -q "$1" && stat -f "$1" >/dev/null 2>&1 &&
			[ "$(grep -c "adopted" "$log")" -gt "$n" ] && return 0
		sleep 0.05
	done
	return 1
}

# holders_end DIR: the hold goes, the mount is unmounted, both processes end, and nothing
# of any keeper is left in /dev/shm.
holders_end() {
	local m=$1 k d shm
	kill "$HOLDER"; wait "$HOLDER" 2>/dev/null
	shm=$(for f in "${NAMES[@]}"; do xget "$m/$f" ipc_handle | tail -c +9 | tr -d '\0' | cut -d/ -f2; done | sort -u)
	k=$(keeper_of "$m"); d=$(daemon_of "$m")
	if [ -n "${MNT_PID[$m]:-}" ]; then umount_tfs "$m"; else fusermount3 -u "$m"; fi
	for _ in $(seq 400); do kill -0 "$k" 2>/dev/null || kill -0 "$d" 2>/dev/null || break; sleep 0.05; done
	check "the daemon and its keeper end at the unmount" bash -c "! kill -0 $k 2>/dev/null && ! kill -0 $d 2>/dev/null"
	local left=""
	for s in $shm; do [ -e "/dev/shm/$s" ] && left="$left $s"; done
	eq "no directory of any keeper left in /dev/shm" "" "$left"
}
