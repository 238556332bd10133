# libtensorfs: a tensor whose memory comes from the handle socket (here a host tensor
# whose shared-memory name was removed, as --memory vmm tensors always do), opened while a
# racer replaces its name by renames: the socket is asked by the name of the file opened,
# which a replace between the open and the request leaves without one. No open may fail
# (a rename replaces a name atomically, names/t_rename_open.sh) nor pair a descriptor with
# another tensor's memory: tfs_open asks only by a name that was the descriptor's before
# and after the answer, and opens the path again when the tensor has none
# (lib/handle_socket.c, lib/client_open.c).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
A=$T/a
mount_tfs "$A" --backend host || exit 1
cold() { "$HELPERS/tfs_client_tool" cold "$@" 2>&1 | paste -sd'|'; }
printf '\1' > "$A/r"
# r and the racer's tensors share one packed block (one directory, owner and mode): its
# name removed, every open of them maps through the socket.
obj=/dev/shm$(xget "$A/r" ipc_handle | tail -c +9 | tr -d '\0')
check "r's block has a shared-memory object" test -f "$obj"
rm -f "$obj"
eq "an open of r maps through the socket" "ahead 3 bad 0|done" "$(cold "$A/r" 3)"
/usr/bin/python3 - "$A" "$T/racing" "$T/stop" > "$T/racer.out" 2>&1 <<'PY' &
import os, sys, time
d = sys.argv[1]
end = time.time() + 120
i = 0
while time.time() < end and not os.path.exists(sys.argv[3]):
    n = i % 60 + 1
    with open(os.path.join(d, "tmp"), "wb") as f:
        f.write(bytes([n]) * n)
    os.rename(os.path.join(d, "tmp"), os.path.join(d, "r"))
    if i == 0:
        open(sys.argv[2], "w").close()
    i += 1
print("replaced", i)
PY
racer=$!
for _ in $(seq 400); do [ -e "$T/racing" ] && break; sleep 0.05; done
out=$(cold "$A/r" 2000)
first=$(cold "$A/r" 2000 first)
touch "$T/stop"
wait "$racer"
echo "# $out; $first; $(cat "$T/racer.out")"
eq "2000 cold opens while r is replaced: none failed, each its descriptor's tensor" \
	"bad 0|done" "$(echo "$out" | grep -o 'bad .*\|error.*')"
eq "2000 first opens (no stat) while r is replaced: the same" \
	"bad 0|done" "$(echo "$first" | grep -o 'bad .*\|error.*')"
check "the racer replaced r many times meanwhile" \
	test "$(sed -n 's/^replaced //p' "$T/racer.out")" -gt 50
finish
