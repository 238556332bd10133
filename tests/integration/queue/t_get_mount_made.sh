# Tensors made in the mount are the queue's too: a get finds one, with its dtype and bytes.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
touch "$M/f"; setfattr -n user.tensor.dtype -v i64 "$M/f"; setfattr -n user.tensor.shape -v '[4]' "$M/f"
sleep 600 & live=$!
r=$(send "{\"op\":\"get\",\"name\":\"f\",\"pid\":$live}")
eq "get of a mount-made tensor" "i64 32" "$(jfield "$r" dtype) $(jfield "$r" bytes)"
send "{\"op\":\"delete\",\"name\":\"f\",\"pid\":$live}" >/dev/null
kill $live; wait $live 2>/dev/null
finish
