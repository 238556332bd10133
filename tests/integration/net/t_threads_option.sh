# -o net_threads out of its range (1 to 16) or not a number: the start says why and
# mounts nothing.
. "$(dirname "$0")/netlib.sh"
start_redis || exit 1
KEY=$T/cluster.key
make_key "$KEY"
mkdir -p "$T/x"
for v in 0 17 -1; do
	check_err "net_threads=$v: refused at start" "net_threads must be between 1 and 16" \
		timeout 60 "$TFS" -f --redis "$URL" --cluster-key "$KEY" -o net_threads=$v "$T/x"
done
check_err "net_threads=abc: refused at start" "invalid parameter in option" \
	timeout 60 "$TFS" -f --redis "$URL" --cluster-key "$KEY" -o net_threads=abc "$T/x"
check "nothing mounted" not mountpoint -q "$T/x"
finish
