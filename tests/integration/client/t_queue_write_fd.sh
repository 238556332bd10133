# tfs_write and tfs_read of 16 KiB or more of a small host tensor go through the
# descriptor of its block, which the library keeps open beside the mapping (at most 128
# per process, lib/ipc_cache.c), and not through the mapping: the bytes are the tensor's
# all the same, for the mount and for the library. A chunk the daemon hands out again
# reads as zeros (it zeroes it through the block's descriptor, fs/mem/host_pack.c).
. "$(dirname "$0")/../lib.sh"
client_tools
export TFS_NODE=n1
# Room for 130 blocks of 1 MiB (each counts whole against the bound).
one_mount --node n1 --backend host --max-bytes 256M
export LC_ALL=C
res=$(out "$TOOL" qwrite "$URL" w 40 65536)
eq "40 tensors of 64 KiB written and read back whole through the library" "bad 0" \
	"$(echo "$res" | grep '^bad')"
fds=$(echo "$res" | sed -n 's/^fds //p')
check "their blocks' descriptors kept while they are held (fds $fds)" test "${fds:-0}" -ge 3
pattern() { head -c 65536 /dev/zero | tr '\0' "\\$(printf %o "$1")"; }
for i in 0 1 17 39; do
	check "w$i reads through the mount what the library wrote" \
		cmp -s <(pattern $((i % 251 + 1))) "$M/w$i"
done
rm -f "$M"/w*
# The empty blocks stay for reuse: new tensors land in chunks the library had written.
for i in $(seq 0 7); do "$TOOL" qcreate "$URL" "z$i" u8 "[65536]" >/dev/null || echo "qcreate z$i failed"; done
zeros=0
for i in $(seq 0 7); do cmp -s <(head -c 65536 /dev/zero) "$M/z$i" && zeros=$((zeros + 1)); done
eq "8 new tensors in the chunks just freed read as zeros" 8 "$zeros"
res=$(out "$TOOL" qwrite "$URL" y 1 16384)
eq "a new tensor, written by the library, gives its bytes back" "bad 0" "$(echo "$res" | grep '^bad')"
# The client's own descriptors: those with one block held, less that block's.
own=$(($(echo "$res" | sed -n 's/^fds //p') - 1))
# 130 directories, a block each: more blocks held than descriptors kept.
for i in $(seq 0 129); do mkdir "$M/d$i"; done
res=$(out "$TOOL" qwrite "$URL" x 130 16384 d 130)
eq "130 tensors in 130 blocks: every one's bytes back" "bad 0" "$(echo "$res" | grep '^bad')"
fds=$(echo "$res" | sed -n 's/^fds //p')
check "the descriptors kept stay bounded ($fds open, the client's own $own and 128 at most)" \
	test "${fds:-999}" -le $((own + 128))
check "those past the bound went through the mapping: d129/x129 holds its bytes" \
	cmp -s <(head -c 16384 /dev/zero | tr '\0' "\\$(printf %o 130)") "$M/d129/x129"
finish
