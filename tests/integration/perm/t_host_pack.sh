# The host backend packs small tensors into 1 MiB blocks (-o host_pack, docs/handles.md):
# a handle then maps the whole block, so a block holds only tensors of one owner, group,
# mode and directory. Checked: who shares a block and who does not, that each tensor's
# handle and offset give its own bytes to another process, that chmod, chown and a rename
# to another directory move a tensor out of a shared block with its bytes, growth past the
# packing size, and that a kill -9 of the daemon keeps every packed tensor, its handle and
# offset, and packs new tensors into the blocks it adopted.
EXPECT_RESTARTS=1     # it kills the daemon once
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --backend host -o host_pack=64K || exit 1
h() { xget "$1" ipc_handle | md5sum | cut -c1-8; }
o() { xget "$1" ipc_offset; }
fill() { head -c "$2" /dev/urandom > "$T/src.$(basename "$1")"; cp "$T/src.$(basename "$1")" "$1"; }
same_bytes() { cmp -s "$T/src.$(basename "$1")" "$1"; }
mapped_ok() { "$SHM_MAP_BIN" "$1" dump | cmp -s - "$1"; }

mkdir -m 755 "$M/d" "$M/e"
fill "$M/d/a" 4096; fill "$M/d/b" 65536; fill "$M/d/c" 100
fill "$M/e/x" 4096
fill "$M/d/big" 200000
eq "two small tensors of one directory, owner and mode share a block" "$(h "$M/d/a")" "$(h "$M/d/b")"
check "at different offsets" test "$(o "$M/d/a")" != "$(o "$M/d/b")"
check "a third one too" test "$(h "$M/d/c")" = "$(h "$M/d/a")"
check "a tensor of another directory does not" test "$(h "$M/e/x")" != "$(h "$M/d/a")"
check "one larger than host_pack has an object of its own" test "$(h "$M/d/big")" != "$(h "$M/d/a")"
eq "at offset 0" 0 "$(o "$M/d/big")"
for f in d/a d/b d/c e/x d/big; do
	check "$f reads its own bytes" same_bytes "$M/$f"
	check "$f's handle and offset give them to another process" mapped_ok "$M/$f"
done
eq "the block is the owner's, with the tensors' mode" "$(stat -c '%u %a' "$M/d/a")" \
	"$(stat -c '%u %a' "$(shm_of "$M/d/a")")"

# A tensor that another process writes through its handle changes only its own bytes.
check "another process fills d/b through the block" "$SHM_MAP_BIN" "$M/d/b" fill 7
eq "d/b holds what it wrote" "$(head -c 65536 /dev/zero | tr '\0' '\7' | md5sum)" \
	"$(md5sum < "$M/d/b")"
check "d/a beside it is untouched" same_bytes "$M/d/a"
check "so is d/c" same_bytes "$M/d/c"
fill "$M/d/b" 65536

ha=$(h "$M/d/a")
check "chmod of a tensor that shares its block" chmod 600 "$M/d/c"
check "moves it to another block" test "$(h "$M/d/c")" != "$ha"
check "with its bytes" same_bytes "$M/d/c"
check "which its handle gives" mapped_ok "$M/d/c"
eq "its new block has its new mode" 600 "$(stat -c '%a' "$(shm_of "$M/d/c")")"
eq "the others stay where they were" "$ha $ha" "$(h "$M/d/a") $(h "$M/d/b")"
eq "and their block keeps its mode" 644 "$(stat -c '%a' "$(shm_of "$M/d/a")")"
check "rename into another directory" mv "$M/d/b" "$M/e/b"
check "moves it out of the block" test "$(h "$M/e/b")" != "$ha"
check "with its bytes" same_bytes "$M/e/b"
check "which its handle gives" mapped_ok "$M/e/b"
check "chown" chown 4242 "$M/d/a"
check "of the tensor alone in its block keeps it there" test "$(h "$M/d/a")" = "$ha"
eq "and gives the block the new owner" 4242 "$(stat -c '%u' "$(shm_of "$M/d/a")")"
check "with its bytes" same_bytes "$M/d/a"
fill "$M/d/n" 4096
check "a new tensor of the directory is not placed in that block" test "$(h "$M/d/n")" != "$ha"

# Growth past the packing size leaves the block.
fill "$M/d/g" 1000
head -c 100000 /dev/urandom > "$T/more"; cat "$T/more" >> "$T/src.g"; cat "$T/more" >> "$M/d/g"
check "a packed tensor grown past host_pack" same_bytes "$M/d/g"
eq "has an object of its own" 0 "$(o "$M/d/g")"
check "which its handle gives" mapped_ok "$M/d/g"
fill "$M/d/s" 1000
printf 'tail' >> "$T/src.s"; printf 'tail' >> "$M/d/s"
check "a packed tensor grown within the packing size" same_bytes "$M/d/s"
check "which its handle gives" mapped_ok "$M/d/s"
truncate -s 2 "$M/d/s"; truncate -s 3000 "$M/d/s"
eq "shrunk and grown again it reads zeros past what it kept" \
	"$( (head -c 2 "$T/src.s"; head -c 2998 /dev/zero) | md5sum)" "$(md5sum < "$M/d/s")"
check "through its handle too" mapped_ok "$M/d/s"

# kill -9: the new daemon adopts the blocks from the records.
names="d/a d/n d/g d/big e/x e/b d/c"
snap() { for f in $names; do echo "$f $(md5sum < "$M/$f" | cut -c1-8) $(h "$M/$f") $(o "$M/$f")"; done; }
before=$(snap)
hx=$(h "$M/e/x")
d=$(daemon_pid "$M")
kill -9 "$d"
restarted() { local p; p=$(daemon_pid "$M"); [ -n "$p" ] && [ "$p" != "$d" ]; }
for _ in $(seq 400); do restarted && break; sleep 0.05; done
serves_within 20 "$M"
eq "after kill -9 every packed tensor keeps its bytes, handle and offset" "$before" "$(snap)"
for f in d/n e/x e/b; do check "$f's handle still gives its bytes" mapped_ok "$M/$f"; done
fill "$M/e/y" 4096
eq "a new tensor is packed into the block the restart adopted" "$hx" "$(h "$M/e/y")"
check "and reads its bytes" same_bytes "$M/e/y"
check "beside the adopted ones" same_bytes "$M/e/x"
check "through its handle too" mapped_ok "$M/e/y"
rm -rf "$M/d" "$M/e"
finish
