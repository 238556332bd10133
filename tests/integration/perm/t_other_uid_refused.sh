# A mode-600 tensor refuses another uid its bytes, its handle, writes and chmod, and
# root's directory refuses it a create; on the host backend the shared-memory object
# follows the mode, so the handle cannot be mapped around the check either.
. "$(dirname "$0")/../lib.sh"
other_uid_mount
head -c 5000 /dev/urandom > "$T/src"
cp "$T/src" "$M/a"
chmod 600 "$M/a"
write_a() { echo x > "$M/a"; }
export M; export -f write_a
check_err "other uid: read refused" "Permission denied" $NOBODY cat "$M/a"
check_err "other uid: handle refused" "Permission denied" $NOBODY getfattr -n user.tensor.ipc_handle "$M/a"
check_err "other uid: write refused" "Permission denied" $NOBODY bash -c write_a
check_err "other uid: chmod refused" "Operation not permitted" $NOBODY chmod 666 "$M/a"
check_err "other uid: cannot create in root's directory" "Permission denied" $NOBODY touch "$M/b"
if [ "$BACKEND" = host ]; then
	eq "shm object follows the mode (600)" "600 0" "$(stat -c '%a %u' "$(shm_of "$M/a")")"
	check_err "other uid: cannot map the shm object either" "Permission denied" $NOBODY "$SHM_MAP_BIN" "$M/a" dump
fi
finish
