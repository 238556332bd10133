# fallocate(mode 0) and posix_fallocate grow a tensor as truncate does; other modes are
# not supported.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
touch "$M/f"
check "fallocate -l 1M" fallocate -l 1M "$M/f"
eq "the tensor has 1 MiB" 1048576 "$(size_of "$M/f")"
eq "its shape is 1-D" "[1048576]" "$(xget "$M/f" shape)"
eq "and zeroed" 0 "$(tr -d '\0' < "$M/f" | wc -c)"
printf 'abcd' > "$M/g"
check "posix_fallocate(0, 2) inside the size" python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDWR); os.posix_fallocate(fd, 0, 2)' "$M/g"
eq "keeps the size and bytes" abcd "$(cat "$M/g")"
check "posix_fallocate(2, 6) past the end" python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDWR); os.posix_fallocate(fd, 2, 6)' "$M/g"
eq "grows it to 8 bytes" 8 "$(size_of "$M/g")"
eq "keeping what was there" abcd "$(head -c 4 "$M/g")"
check_err "fallocate --keep-size: not supported" "upported" fallocate -n -l 2M "$M/f"
check_err "punching a hole: not supported" "upported" fallocate -p -o 0 -l 4096 "$M/f"
finish
