# The host tier on the cuda backend (docs/tiers.md): a tensor of GPU 0 sleeps to host
# memory (user.tensor.device cpu) and wakes on GPU 0 with the same bytes, as a separate
# CUDA process reads them through the new handle; while asleep its GPU memory is free
# (the stats attribute, tensorctl df; nvidia-smi printed beside) and the host tier holds
# it; a byte changed in host memory while asleep is refused at wake (EBADMSG); a directory
# sleeps and wakes with tensorctl mv; a daemon killed with SIGKILL mid-sleep, and again
# mid-wake, leaves every tensor whole on one side, and the wake then finishes.
. "$(dirname "$0")/gpulib.sh"
gpu_tests "sleep and wake of a tensor: same bytes, GPU memory freed" \
	"a byte changed asleep: the wake refused" "a directory sleeps and wakes" \
	"kill -9 mid-sleep: every tensor whole" "kill -9 mid-wake: every tensor whole" \
	"the wake finished after the restart"
EXPECT_RESTARTS=1
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 || exit 1
cd "$T"
dev_reserved() {
	getfattr --only-values -n user.tensorfs.stats "$M" | /usr/bin/python3 -c \
		'import json,sys; print([d["reserved"] for d in json.load(sys.stdin)["devices"] if str(d["device"])==sys.argv[1]][0])' "$1"
}
smi_mib() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null | tr -d ' '; }
smi() { echo "# nvidia-smi GPU 0 used: $(smi_mib) MiB"; }

head -c $((512 << 20)) /dev/urandom > "$T/big"
cp "$T/big" "$M/w"
smi
u0=$(smi_mib)
r0=$(dev_reserved 0)
check "sleep: setfattr user.tensor.device cpu" setfattr -n user.tensor.device -v cpu "$M/w"
smi
check "nvidia-smi shows the GPU memory given back (at least 448 of the 512 MiB)" \
	test "$(smi_mib)" -le $((u0 - 448))
eq "getxattr shows cpu" cpu "$(xget "$M/w" device)"
eq "the record says backend host" host "$(rcli hget tensorfs:tensor:w backend)"
check "GPU 0 gave back the 512 MiB (stats: reserved)" test "$(dev_reserved 0)" -le $((r0 - (512 << 20)))
check "the host tier holds them" test "$(dev_reserved cpu)" -ge $((512 << 20))
check "tensorctl df lists the host tier" sh -c "\"$CTL\" df \"$M\" | grep -q '^cpu (host)'"
check "the bytes read through the mount while asleep" cmp "$T/big" "$M/w"
check "the wake: setfattr user.tensor.device 0" setfattr -n user.tensor.device -v 0 "$M/w"
eq "getxattr shows 0" 0 "$(xget "$M/w" device)"
dump "$M/w" > "$T/dumped"
if cmp -s "$T/big" "$T/dumped" && cmp -s "$T/big" "$M/w"; then
	ok "sleep and wake of a tensor: same bytes, GPU memory freed"
else
	nok "sleep and wake of a tensor: same bytes, GPU memory freed"
fi

setfattr -n user.tensor.device -v cpu "$M/w"
shm=$(shm_of "$M/w")
printf '\x5a' | dd of="$shm" bs=1 seek=$((100 << 20)) conv=notrunc status=none
if ! setfattr -n user.tensor.device -v 0 "$M/w" 2>"$T/err" && grep -q "Bad message" "$T/err" &&
   [ "$(xget "$M/w" device)" = cpu ]; then
	ok "a byte changed asleep: the wake refused"
else
	nok "a byte changed asleep: the wake refused ($(cat "$T/err"))"
fi
rm -f "$M/w"

mkdir "$M/model"
for i in $(seq 16); do head -c $((64 << 20)) /dev/urandom > "$T/b$i"; cp "$T/b$i" "$M/model/t$i"; done
whole() {
	local i dev
	for i in $(seq 16); do
		dev=$(xget "$M/model/t$i" device)
		case $dev in cpu|0) ;; *) echo "t$i on '$dev'"; return 1 ;; esac
		cmp -s "$T/b$i" "$M/model/t$i" || { echo "t$i: bytes differ ($dev)"; return 1; }
	done
}
"$CTL" mv -q --device cpu "$M/model" && [ "$(xget "$M/model/t7" device)" = cpu ] &&
	"$CTL" mv -q --device 0 "$M/model" && [ "$(xget "$M/model/t7" device)" = 0 ] && whole &&
	ok "a directory sleeps and wakes" || nok "a directory sleeps and wakes"

"$CTL" mv -q --device cpu "$M/model" > /dev/null 2>&1 & mv=$!
for _ in $(seq 2000); do
	[ "$(redis-cli -s "$SOCK" hget tensorfs:tensor:model/t1 device)" = cpu ] && break
	[ "$(redis-cli -s "$SOCK" hget tensorfs:tensor:model/t9 device)" = cpu ] && break
	sleep 0.002
done
kill9_and_serve "$M" || nok "the daemon serves again after its SIGKILL mid-sleep"
wait $mv
whole && ok "kill -9 mid-sleep: every tensor whole" || nok "kill -9 mid-sleep: every tensor whole"

# The same mid-wake: all asleep first, then the wake killed once a tensor is back on GPU 0.
"$CTL" mv -q --device cpu "$M/model" > /dev/null 2>&1
"$CTL" mv -q --device 0 "$M/model" > /dev/null 2>&1 & mv=$!
for _ in $(seq 2000); do
	[ "$(redis-cli -s "$SOCK" hget tensorfs:tensor:model/t1 device)" = 0 ] && break
	[ "$(redis-cli -s "$SOCK" hget tensorfs:tensor:model/t9 device)" = 0 ] && break
	sleep 0.002
done
kill9_and_serve "$M" || nok "the daemon serves again after its SIGKILL mid-wake"
wait $mv
whole && ok "kill -9 mid-wake: every tensor whole" || nok "kill -9 mid-wake: every tensor whole"
"$CTL" mv -q --device 0 "$M/model" && whole && ok "the wake finished after the restart" ||
	nok "the wake finished after the restart"
umount_tfs "$M"
finish
