# /etc/fstab passes every option as -o key=value: redis, node, prefix, queue, max-bytes,
# threads and log all apply.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
cd "$T"
O=$T/fstab
mkdir -p "$O"
"$TFS" -f -o "redis=$URL,node=nf,prefix=pf,queue=qf,max-bytes=1M,threads=3,log=$T/fstab.log" "$O" &
MNT_PID[$O]=$!
for _ in $(seq 400); do mountpoint -q "$O" && break; sleep 0.05; done
check "-o key=value options mount" mountpoint -q "$O"
check "-o threads applies" grep -q "serving with 3 FUSE worker threads" "$T/fstab.log"
echo x > "$O/a"
eq "-o prefix and node apply" nf "$(rcli hget pf:tensor:a node)"
check_err "-o max-bytes applies" "No space left" setfattr -n user.tensor.shape -v '[2000000]' "$O/a"
r=$(rcli lpush qf '{"op":"get","name":"a","pid":1,"id":"1","reply":"fr"}' >/dev/null; rcli brpop fr 20 | tail -1)
check "-o queue applies" grep -q '"id":"1"' <<< "$r"
finish
