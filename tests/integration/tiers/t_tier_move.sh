# The host tier "cpu" beside device ordinals (docs/tiers.md), on the host backend with two
# stand-in devices (-o host_devices=2): user.tensor.device takes cpu and reads it back; a
# move by name to cpu and back keeps the bytes, the name, the metadata and the user
# attributes, the handle and the record following; EBUSY while another process holds the
# tensor; EINVAL for a tier not served; the stats attribute and statfs report each tier.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
cd "$T" || exit 1
M=$T/m
mount_tfs "$M" --backend host -o host_devices=2 --max-bytes cpu:64M,0:32M,1:32M || exit 1

head -c $((3 << 20)) /dev/urandom > "$T/bytes"
cp "$T/bytes" "$M/w"
setfattr -n user.note -v kept "$M/w"
eq "a new tensor is on device 0" 0 "$(xget "$M/w" device)"
h0=$(xget "$M/w" ipc_handle | md5sum)
shape=$(xget "$M/w" shape)
check "setfattr user.tensor.device cpu" setfattr -n user.tensor.device -v cpu "$M/w"
eq "getxattr shows cpu" cpu "$(xget "$M/w" device)"
check "the bytes are kept in the host tier" cmp "$T/bytes" "$M/w"
eq "the shape is kept" "$shape" "$(xget "$M/w" shape)"
eq "the user attribute is kept" kept "$(getfattr --only-values -n user.note "$M/w")"
check "the handle changed" not test "$h0" = "$(xget "$M/w" ipc_handle | md5sum)"
eq "the record says cpu" cpu "$(rcli hget tensorfs:tensor:w device)"
check "the record has a checksum" test "$(rcli hget tensorfs:tensor:w sum)" != 0
map_dump "$M/w" > "$T/mapped"
check "a process maps it by its new handle and reads the bytes" cmp "$T/mapped" "$T/bytes"
stats=$(getfattr --only-values -n user.tensorfs.stats "$M")
eq "the stats attribute lists 0, 1 and cpu" "[0,1,'cpu']" \
	"$(/usr/bin/python3 -c 'import json,sys; print([d["device"] for d in json.loads(sys.argv[1])["devices"]])' "$stats" | tr -d ' ')"
eq "the host tier holds the tensor's 3 MiB, device 0 nothing" "$((3 << 20)) 0" \
	"$(/usr/bin/python3 -c 'import json,sys; d={str(x["device"]):x for x in json.loads(sys.argv[1])["devices"]}; print(d["cpu"]["used"], d["0"]["used"])' "$stats")"
mkdir "$M/host"
check "user.tensor.device cpu as a directory default" setfattr -n user.tensor.device -v cpu "$M/host"
eq "the directory default reads cpu" cpu "$(getfattr --only-values -n user.tensor.device "$M/host")"
eq "statfs of the host directory: the host tier's 64 MiB" "$((64 << 20))" "$(( $(stat -f -c '%b*%S' "$M/host") ))"
truncate -s 1M "$M/host/n"
eq "a tensor made there is in the host tier" cpu "$(xget "$M/host/n" device)"

check "wake on device 1 by name" setfattr -n user.tensor.device -v 1 "$M/w"
eq "getxattr shows 1" 1 "$(xget "$M/w" device)"
check "the bytes woke unchanged" cmp "$T/bytes" "$M/w"
eq "the record has no checksum once awake" 0 "$(rcli hget tensorfs:tensor:w sum)"
check "back to cpu" setfattr -n user.tensor.device -v cpu "$M/w"
check "and to device 0" setfattr -n user.tensor.device -v 0 "$M/w"
check "the bytes are still those written" cmp "$T/bytes" "$M/w"

# EBUSY while another process holds it; EINVAL for what is no tier here
exec 7<"$M/w"
sleep 30 <&7 & holder=$!
exec 7<&-
check_err "a move while another process holds it open: EBUSY" "busy" setfattr -n user.tensor.device -v cpu "$M/w"
eq "it stayed on device 0" 0 "$(xget "$M/w" device)"
kill "$holder"; wait "$holder" 2>/dev/null
check_err "device 2 (not served): EINVAL" "Invalid argument" setfattr -n user.tensor.device -v 2 "$M/w"
check_err "'gpu' (no tier): EINVAL" "Invalid argument" setfattr -n user.tensor.device -v gpu "$M/w"
check_err "'cpu0': EINVAL" "Invalid argument" setfattr -n user.tensor.device -v cpu0 "$M/w"
# ENOSPC per tier: device 1 holds 32 MiB, cpu 64 MiB
check_err "a 40 MiB tensor does not fit device 0's 32 MiB" "File too large" truncate -s 40M "$M/big"
truncate -s 40M "$M/host/big"
check "a 40 MiB tensor fits the host tier" test "$(size_of "$M/host/big")" = $((40 << 20))
check_err "its move to device 1 (32 MiB): ENOSPC, nothing changed" "No space" setfattr -n user.tensor.device -v 1 "$M/host/big"
eq "it stayed in the host tier" cpu "$(xget "$M/host/big" device)"
umount_tfs "$M"

mkdir -p "$T/x"
check_err "--devices cpu,0,5: no device 5" "no device 5" timeout 30 "$TFS" -f --redis "$URL" --backend host -o host_devices=2 --devices cpu,0,5 "$T/x"
check_err "--max-bytes cpu:1M,cpu:2M: refused" "is not a size" timeout 30 "$TFS" -f --redis "$URL" --max-bytes cpu:1M,cpu:2M "$T/x"
mount_tfs "$M" --backend host --devices 0 -o host_devices=2 || exit 1
truncate -s 1M "$M/t"
check_err "--devices 0: cpu is not served, EINVAL" "Invalid argument" setfattr -n user.tensor.device -v cpu "$M/t"
umount_tfs "$M"
finish
