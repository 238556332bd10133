# The handle socket and --user-queues without allow_other: a user given a queue gets
# tensors' descriptors from the socket as its permissions allow (in --memory vmm its queue
# get maps the tensor through the socket), while a user given nothing is refused, as the
# mount refuses it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/quser_lib.sh"
start_redis || exit 1
M=$T/m
SOCKP=$T/handles.sock
quser_mount "$M" --node n1 --backend host --handle-socket "$SOCKP" || exit 1
cp "$ROOT/tests/integration/handle_get.py" "$T/"
G="/usr/bin/python3 $T/handle_get.py"
mkdir "$M/d"
head -c 70000 /dev/urandom > "$T/pub"; cp "$T/pub" "$M/d/pub"
head -c 5000 /dev/urandom > "$T/priv"; cp "$T/priv" "$M/d/priv"
chmod 644 "$M/d/pub"; chmod 600 "$M/d/priv"
eq "the queue's user reads pub (mode 644)" "0 70000
same
ro" "$(as_user $G "$SOCKP" r d/pub check "$T/pub")"
eq "but may not write it" "-13" "$(as_user $G "$SOCKP" w d/pub)"
eq "nor read priv (mode 600)" "-13" "$(as_user $G "$SOCKP" r d/priv)"
eq "a user without a queue: EACCES (no allow_other)" "-13" \
	"$(setpriv --reuid=65533 --regid=65533 --clear-groups $G "$SOCKP" r d/pub)"
finish
