# A name over 255 bytes is ENAMETOOLONG for every call that looks it up, not ENOENT
# (pjdfstest chmod/02, chown/02, truncate/02, rename/01, rmdir/02, unlink/02).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
n256=$(printf 'a%.0s' $(seq 256))
n255=$(printf 'a%.0s' $(seq 255))
check_err "stat of a 256-byte name: ENAMETOOLONG" "File name too long" stat "$M/$n256"
check_err "chmod of a 256-byte name: ENAMETOOLONG" "File name too long" chmod 600 "$M/$n256"
check_err "rm of a 256-byte name: ENAMETOOLONG" "File name too long" rm "$M/$n256"
check_err "rmdir of a 256-byte name: ENAMETOOLONG" "File name too long" rmdir "$M/$n256"
check_err "truncate of a 256-byte name: ENAMETOOLONG" "File name too long" truncate -s 0 "$M/$n256"
check "a 255-byte name works" touch "$M/$n255"
check "and stats" stat "$M/$n255"
finish
