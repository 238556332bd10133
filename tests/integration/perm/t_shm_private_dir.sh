# A 0644 tensor in root's 0700 directory stays out of another uid's reach in /dev/shm
# too: the host objects live in the keeper's 0711 directory, which that uid may traverse
# but not list, under names of 96 random bits, so no name it can find opens and no file
# it can read holds the bytes (issue 15, item 8). Through the mount it is refused as
# well; a 0644 tensor in a 0755 directory stays mappable by that uid with its handle.
. "$(dirname "$0")/../lib.sh"
other_uid_mount
if [ "$BACKEND" != host ]; then
	echo "skip - the keeper's private directory in /dev/shm: the $BACKEND backend uses no /dev/shm"
	finish
	exit
fi
keeper=${MNT_PID[$M]}
mark=tfs-secret-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
{ printf '%s' "$mark"; head -c 5000 /dev/urandom; } > "$T/secret"
mkdir -m 700 "$M/priv"
cp "$T/secret" "$M/priv/t"
chmod 644 "$M/priv/t"
mkdir -m 755 "$M/pub"
head -c 3000 /dev/urandom > "$T/public"
cp "$T/public" "$M/pub/p"
chmod 644 "$M/pub/p"
export M keeper mark

dirs=$(ls /dev/shm | grep "^tensorfs\.$keeper\." || true)
eq "one directory of the keeper's in /dev/shm" 1 "$(printf '%s\n' "$dirs" | grep -c .)"
d=/dev/shm/$(printf '%s\n' "$dirs" | head -1)
eq "it is root's, mode 711" "directory 711 0" "$(stat -c '%F %a %u' "$d" 2>&1)"
eq "the object follows the tensor (644, root)" "644 0" "$(stat -c '%a %u' "$(shm_of "$M/priv/t")")"
check_err "other uid: listing the keeper's directory is refused" "Permission denied" $NOBODY ls "$d"
opens() {
	for f in /dev/shm/tensorfs.$keeper.*; do
		[ -f "$f" ] && cat "$f" >/dev/null 2>&1 && echo "$f"
	done
	return 0
}
export -f opens
eq "other uid: no name it finds in /dev/shm opens" "" "$($NOBODY bash -c opens)"
# The tensor's object is 8 KiB; larger files (other programs' in a shared /dev/shm) are
# not read, so the check stays quick.
holds() { find /dev/shm -type f -readable -size -1024k -print0 2>/dev/null | xargs -0 -r grep -lF -- "$mark" 2>/dev/null; return 0; }
export -f holds
eq "other uid: no file under /dev/shm it can read holds the bytes" "" "$($NOBODY bash -c holds)"
check "root (who may read the tensor) finds them in its object" grep -qF -- "$mark" "$(shm_of "$M/priv/t")"
check_err "other uid: read through the mount refused" "Permission denied" $NOBODY cat "$M/priv/t"
check_err "other uid: handle refused" "Permission denied" $NOBODY getfattr -n user.tensor.ipc_handle "$M/priv/t"
maps_public() { $NOBODY bash -c 'map_dump "$M/pub/p"' | cmp -s - "$T/public"; }
check "other uid: maps the public tensor with its handle" maps_public
rm -r "$M/priv" "$M/pub"
check_nothing_left "$M"
eq "the directory goes with the last object" "" "$(ls /dev/shm | grep "^tensorfs\.$keeper\." || true)"
finish
