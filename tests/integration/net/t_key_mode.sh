# A cluster key others may read, or too short, is refused at start with the reason;
# nothing is mounted.
. "$(dirname "$0")/netlib.sh"
start_redis || exit 1
make_key "$T/k"
chmod 640 "$T/k"
mkdir -p "$T/a"
check_err "a key readable by the group: refused" "readable or writable by others" \
	timeout 60 "$TFS" -f --redis "$URL" --node n1 --cluster-key "$T/k" "$T/a"
check "not mounted" not mountpoint -q "$T/a"
printf short > "$T/s"
chmod 600 "$T/s"
check_err "a key of 5 bytes: refused" "a key is 16 to" \
	timeout 60 "$TFS" -f --redis "$URL" --node n1 --cluster-key "$T/s" "$T/a"
check_err "a missing key file: refused" "No such file" \
	timeout 60 "$TFS" -f --redis "$URL" --node n1 --cluster-key "$T/none" "$T/a"
check "not mounted" not mountpoint -q "$T/a"
finish
