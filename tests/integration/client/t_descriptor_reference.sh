# The descriptor is the reference: an open tensor counts one, a killed holder's goes with
# its process, and close releases it.
. "$(dirname "$0")/../lib.sh"
client_mount
f32_23 "$M/a"
"$TOOL" hold "$M/a" 3 > "$T/hold.out" &
hp=$!
for _ in $(seq 400); do grep -q held "$T/hold.out" 2>/dev/null && break; sleep 0.05; done
eq "an open tensor counts one reference" 2 "$(rcli hget tensorfs:tensor:a refcount)"
kill $hp; wait $hp 2>/dev/null
for _ in $(seq 400); do [ "$(rcli hget tensorfs:tensor:a refcount)" = 1 ] && break; sleep 0.05; done
eq "a killed holder's reference is gone" 1 "$(rcli hget tensorfs:tensor:a refcount)"
eq "close releases the reference" 1 "$("$TOOL" info "$M/a" >/dev/null; rcli hget tensorfs:tensor:a refcount)"
finish
