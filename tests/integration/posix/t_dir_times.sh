# A directory's mtime and ctime change when entries are created, removed or renamed in it
# (pjdfstest mkdir/00, open/00, rmdir/00, unlink/00, rename/00).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
mkdir "$M/d" "$M/e"
times() { stat -c %Y.%Z "$1"; }
# changes DESC CMD...: the times of $M/d move across CMD (a second apart: whole seconds)
changes() {
	local d=$1 t0; shift
	t0=$(times "$M/d"); sleep 1.1; "$@"
	check "$d: the directory's mtime and ctime move" test "$(times "$M/d")" != "$t0"
	local m c; IFS=. read -r m c <<< "$(times "$M/d")"
	eq "$d: mtime = ctime" "$m" "$c"
}
changes "a tensor created in it" touch "$M/d/x"
changes "a tensor removed from it" rm "$M/d/x"
changes "a directory made in it" mkdir "$M/d/s"
changes "a directory removed from it" rmdir "$M/d/s"
touch "$M/e/y"
changes "a tensor renamed into it" mv "$M/e/y" "$M/d/y"
t0=$(times "$M/e"); sleep 1.1; mv "$M/d/y" "$M/e/y"
check "a tensor renamed out of a directory moves its times" test "$(times "$M/e")" != "$t0"
changes "a tensor made by the queue's neighbour, mknod" python3 -c 'import os,stat,sys; os.mknod(sys.argv[1], 0o644 | stat.S_IFREG)' "$M/d/n"
finish
