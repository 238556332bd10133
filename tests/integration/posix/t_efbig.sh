# A size no device here could ever hold is EFBIG, not ENOSPC (pjdfstest truncate/12,
# ftruncate/12); one that could fit but does not now stays ENOSPC.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --max-bytes 64M || exit 1
touch "$M/f"
check_err "truncate to 1 EiB: EFBIG" "File too large" truncate -s 1E "$M/f"
check_err "truncate past --max-bytes: EFBIG" "File too large" truncate -s 65M "$M/f"
check "truncate within --max-bytes works" truncate -s 1M "$M/f"
eq "and sized it" 1048576 "$(size_of "$M/f")"
touch "$M/g"
check "a second 48 MiB... " truncate -s 48M "$M/g"
check_err "...leaves no room for 32 more: ENOSPC" "No space left" truncate -s 32M "$M/f"
finish
