# A directory moves between tiers with one command, all or none (tensorctl mv --device,
# tfs_move; docs/tiers.md): its whole tree in parallel; when one tensor cannot move (the
# tier too small: ENOSPC; another process holds it: EBUSY) those moved go back and every
# tensor is where it was with its bytes; a wake of the whole directory brings it back.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
cd "$T" || exit 1
M=$T/m
mount_tfs "$M" --backend host -o host_devices=1 --max-bytes cpu:10M,0:64M || exit 1

mkdir -p "$M/model/layers"
for i in 0 1 2 3 4 5; do
	head -c $((2 << 20)) /dev/urandom > "$T/b$i"
	d=$M/model; [ $i -ge 3 ] && d=$M/model/layers
	cp "$T/b$i" "$d/t$i"
done
same() {
	local i dir
	for i in 0 1 2 3 4 5; do
		dir=$M/model; [ $i -ge 3 ] && dir=$M/model/layers
		[ "$(xget "$dir/t$i" device)" = "$1" ] || { echo "t$i on $(xget "$dir/t$i" device)"; return 1; }
		cmp "$T/b$i" "$dir/t$i" || return 1
	done
}
check_err "12 MiB into a 10 MiB host tier: ENOSPC, naming the tensor" "No space left on device" \
	"$CTL" mv -q --device cpu "$M/model"
check "nothing moved: every tensor on device 0 with its bytes" same 0
eq "the host tier holds nothing" 0 \
	"$(getfattr --only-values -n user.tensorfs.stats "$M" | /usr/bin/python3 -c 'import json,sys; print([d["reserved"] for d in json.load(sys.stdin)["devices"] if d["device"]=="cpu"][0])')"

rm "$M/model/t0"
check "10 MiB in the 10 MiB host tier: tensorctl mv --device cpu DIR" "$CTL" mv -q -j 4 --device cpu "$M/model"
eq "t1..t5 are asleep" "cpu cpu cpu cpu cpu" \
	"$(for i in 1 2 3 4 5; do d=$M/model; [ $i -ge 3 ] && d=$M/model/layers; echo "$(xget "$d/t$i" device)"; done | xargs)"
check "tensorctl ls -l shows cpu" sh -c "\"$CTL\" ls -l \"$M/model\" | grep -q ' cpu '"
check "tensorctl df names the host tier" sh -c "\"$CTL\" df \"$M\" | grep -q '^cpu (host)'"
check "tensorctl df --json has it" sh -c "\"$CTL\" df --json \"$M\" | grep -q '\"device\":\"cpu\"'"
cp "$T/b0" "$M/model/t0"
check "wake: tensorctl mv --device 0 DIR" "$CTL" mv -q --device 0 "$M/model"
check "every tensor awake on device 0 with its bytes" same 0

# EBUSY: another process holds one of them; none moves.
exec 7<"$M/model/layers/t4"
sleep 60 <&7 & holder=$!
exec 7<&-
check_err "a directory move while another process holds a tensor: EBUSY" "busy" \
	"$CTL" mv -q --device cpu "$M/model"
kill "$holder"; wait "$holder" 2>/dev/null
check "nothing moved: every tensor on device 0 with its bytes" same 0
check_err "--device gpu: refused" "not cpu nor a GPU ordinal" "$CTL" mv --device gpu "$M/model"
check_err "no --device: refused" "needs\|needed" "$CTL" mv "$M/model"
umount_tfs "$M"
finish
