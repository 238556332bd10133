# rename(2) replaces a name atomically for an open(2) racing it, as on a local file
# system: the open gets the old tensor or the new one, never ENOENT. The kernel may send
# the OPEN of the tensor it looked up after the rename replaced it; the daemon keeps that
# tensor until the kernel forgets its node (fs/kernel/node.h), then frees it.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
A=$T/a
mount_tfs "$A" || exit 1
tool() { "$HELPERS/tfs_client_tool" "$@"; }
touch "$A/r"
tool replace "$A/r" 4 > "$T/rep" & p1=$!
tool opens "$A/r" 4 > "$T/o1" & p2=$!
tool opens "$A/r" 4 > "$T/o2" & p3=$!
wait $p1 $p2 $p3
echo "# $(head -1 "$T/rep"); $(head -1 "$T/o1"); $(head -1 "$T/o2")"
check "the name was replaced many times" test "$(sed -n 's/^replaced //p' "$T/rep")" -gt 100
eq "no open racing the renames failed (first opener)" "enoent 0 other 0" \
	"$(grep -o 'enoent.*' "$T/o1")"
eq "nor the second" "enoent 0 other 0" "$(grep -o 'enoent.*' "$T/o2")"
unlinked() { rcli --scan --pattern 'tensorfs:unlinked:*' | wc -l; }
for _ in $(seq 400); do [ "$(unlinked)" = 0 ] && break; sleep 0.05; done
eq "every replaced tensor is freed once the kernel forgets it" 0 "$(unlinked)"
# Memory: a 64 MiB tensor replaced by a rename goes as the rename returns (the kernel
# forgets its node then), as far as df can tell a moment later.
used() { df -B1 --output=used "$A" | tail -1; }
base=$(used)
head -c $((64 << 20)) /dev/zero > "$A/big"
head -c 1 /dev/zero > "$A/small"
check "the 64 MiB tensor counts in df" test "$(used)" -ge $((base + (64 << 20)))
mv "$A/small" "$A/big"
for _ in $(seq 400); do [ "$(used)" -lt $((base + (64 << 20))) ] && break; sleep 0.05; done
check "replaced by a rename, its memory is freed" test "$(used)" -lt $((base + (64 << 20)))
# Held open, the replaced tensor lives on with its descriptor, and goes with it.
head -c $((64 << 20)) /dev/zero > "$A/big"
exec 7< "$A/big"
touch "$A/small2"
mv "$A/small2" "$A/big"
eq "a descriptor opened before the rename still reads the old tensor" 67108864 \
	"$(stat -L -c %s /proc/self/fd/7)"
exec 7<&-
for _ in $(seq 400); do [ "$(unlinked)" = 0 ] && break; sleep 0.05; done
eq "and it is freed once closed" 0 "$(unlinked)"
finish
