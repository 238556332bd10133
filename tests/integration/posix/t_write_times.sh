# write() sets mtime and ctime without taking the namespace lock (one atomic store, folded
# in by the next reader): a stat right after shows them, an explicit utimensat before is
# overridden, and a reshape after a write keeps its later ctime (clients compare it to
# know their cached metadata is stale).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
ns() { stat -c '%.9Y %.9Z' "$1"; }
echo x > "$M/f"; touch -d 2000-01-01 "$M/f"
t0=$(date +%s.%N); echo y >> "$M/f"; read -r m c <<< "$(ns "$M/f")"
check "a write after utimensat: mtime is now" python3 -c "import sys; sys.exit(not float('$m') >= float('$t0') - 0.01)"
eq "mtime = ctime" "$m" "$c"
sync "$M/f"
eq "the record has it" "${m%.*}" "$(rcli hget tensorfs:tensor:f mtime)"
head -c 8 /dev/zero > "$M/g"; setfattr -n user.tensor.dtype -v u8 "$M/g"
echo -n abcdefgh | dd of="$M/g" conv=notrunc status=none
setfattr -n user.tensor.shape -v '[2,4]' "$M/g"
read -r m1 c1 <<< "$(ns "$M/g")"
sleep 0.05; stat "$M/g" >/dev/null
read -r m2 c2 <<< "$(ns "$M/g")"
eq "a reshape's ctime stays after the write before it is folded in" "$c1" "$c2"
finish
