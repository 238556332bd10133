# Paths longer than PATH_MAX from the mount's root work: each call names its path
# relative to a directory deep inside (pjdfstest */03, rename/02). The daemon's own limit
# is beyond (max_path, 8 KiB by default), ENAMETOOLONG past it (t_path_bounded.sh).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
n=$(printf 'd%.0s' $(seq 250))
deep() {
	cd "$M" || return 1
	for i in $(seq 20); do mkdir "$n" && cd "$n" || { echo "stopped at depth $i"; return 1; }; done
	printf 'deep' > f && [ "$(cat f)" = deep ] && [ "$(stat -c %s f)" = 4 ] || return 1
	setfattr -n user.tensor.dtype -v u8 f && mv f g && [ -e g ] && rm g || return 1
}
check "20 levels of 250-byte names (5,020 bytes): mkdir, write, read, rename, rm" deep
# down N: cd N levels deep, one relative name at a time (an absolute path that long is
# more than one system call may name).
down() { cd "$M" && for _ in $(seq "$1"); do cd "$n" || return 1; done; }
listed() { down 19 && ls | grep -qx "$n"; }
check "the deepest directory is listed by its parent" listed
too_long() {
	down 20 || return 1
	for i in $(seq 200); do mkdir "$n" 2>"$T/mkdir.err" || break; cd "$n"; done
	grep -q "File name too long" "$T/mkdir.err"
}
check "past max_path from the root: ENAMETOOLONG" too_long
cd "$T"
check "rm -r of the whole tree" rm -r "$M/$n"
eq "nothing left" "" "$(ls "$M")"
finish
