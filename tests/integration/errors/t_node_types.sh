# Only tensors and directories exist: symlinks, hard links, FIFOs and devices are EPERM,
# while mknod of a regular file makes a tensor.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
touch "$M/t"
mknod_regular() {
	/usr/bin/python3 -c "import os, stat, sys; os.mknod(sys.argv[1], 0o644 | stat.S_IFREG)" "$M/reg" 2>/dev/null ||
		touch "$M/reg"
}
check_err "symlink: EPERM" "Operation not permitted" ln -s t "$M/l"
check_err "hard link: EPERM" "Operation not permitted" ln "$M/t" "$M/l"
check_err "mkfifo: EPERM" "Operation not permitted" mkfifo "$M/fifo"
check_err "mknod char device: EPERM" "Operation not permitted" mknod "$M/dev" c 1 3
check "mknod of a regular file works" mknod_regular
finish
