# The cuda backend keeps each directory's tensors in blocks of their own (a CUDA IPC handle
# maps its whole block: issue 15 item 9); the record's dir field is the directory identity
# that key is made of, and a restart derives the keys from it. What the host build can
# check: every way a tensor is made or moved records its directory's inode number, and a
# restart keeps it. The blocks themselves: tests/gpu/t_block_isolation.sh and the key's
# unit test in tests/unit/test_pool.c.
EXPECT_RESTARTS=1     # it kills the daemon once
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --backend host || exit 1
dino() { rcli hget "tensorfs:dir:$1" ino; }
tdir() { rcli hget "tensorfs:tensor:$1" dir; }
mkdir -m 755 "$M/pub"; mkdir -m 700 "$M/priv"
echo a > "$M/pub/a"; echo b > "$M/priv/b"; echo r > "$M/r"
check "the directories have inode numbers" test -n "$(dino pub)" -a -n "$(dino priv)"
eq "a tensor made through the mount records its directory" "$(dino pub)" "$(tdir pub/a)"
eq "one in another directory records that one" "$(dino priv)" "$(tdir priv/b)"
check "the two differ" test "$(tdir pub/a)" != "$(tdir priv/b)"
check "a tensor of the root records a directory too" test -n "$(tdir r)"
r=$(qsend '{"op":"create","name":"priv/q","dtype":"u8","shape":[16]}')
eq "queue create answered" True "$(jfield "$r" ok)"
eq "a tensor made through the queue records its directory" "$(dino priv)" "$(tdir priv/q)"

check "rename into another directory" mv "$M/pub/a" "$M/priv/a"
eq "a rename into another directory records the new one" "$(dino priv)" "$(tdir priv/a)"
eq "its bytes are intact" a "$(cat "$M/priv/a")"
check "rename within the directory" mv "$M/priv/a" "$M/priv/a2"
eq "a rename within a directory keeps it" "$(dino priv)" "$(tdir priv/a2)"
ino=$(dino priv)
check "rename of the directory" mv "$M/priv" "$M/priv2"
eq "the moved directory keeps its inode number" "$ino" "$(dino priv2)"
eq "its tensors keep their directory (they still share one path)" "$ino" "$(tdir priv2/b)"

# A restart adopts the memory under the keys the records give: the same directories.
before=$(for k in priv2/b priv2/q priv2/a2 r; do tdir $k; done)
d=$(daemon_pid "$M")
kill -9 "$d"
restarted() { local p; p=$(daemon_pid "$M"); [ -n "$p" ] && [ "$p" != "$d" ]; }
for _ in $(seq 400); do restarted && break; sleep 0.05; done
serves_within 20 "$M"
check "the daemon serves again" stat "$M/priv2/b"
eq "after a restart every record keeps its directory" "$before" \
	"$(for k in priv2/b priv2/q priv2/a2 r; do tdir $k; done)"
eq "and the bytes" b "$(cat "$M/priv2/b")"
echo c > "$M/priv2/c"
eq "a new tensor after the restart records the same directory" "$ino" "$(tdir priv2/c)"
rm -rf "$M/pub" "$M/priv2" "$M/r"
finish
