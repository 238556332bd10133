# A tensor's Redis record has every field docs/contract.md names, and its handle is the
# one the xattr shows.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
touch "$M/a"
setfattr -n user.tensor.dtype -v f32 "$M/a"
setfattr -n user.tensor.shape -v '[2,3]' "$M/a"
for f in dtype shape ctime node device bytes ipc_handle refcount ipc_offset state; do
	eq "record has field $f" 1 "$(rcli hexists tensorfs:tensor:a $f)"
done
eq "record handle equals the xattr" "$(getfattr --only-values -n user.tensor.ipc_handle "$M/a" | od -An -v -tx1 | tr -d ' \n')" \
	"$(rcli hget tensorfs:tensor:a ipc_handle | head -c 64 | od -An -v -tx1 | tr -d ' \n')"
finish
