# tfs_copy (tensorfs.copy in Python) of another node's directory: the replica is this
# node's with the owner's bytes, progress reaches the total; a copy cancelled or that
# cannot be made (DEST exists, DEST inside SRC) leaves nothing.
. "$(dirname "$0")/netlib.sh"
net_nodes
mkdir -p "$A/m/layers/0"
setfattr -n user.safetensors.metadata -v '{"format":"pt"}' "$A/m"
rand_tensor "$A/m/layers/0/w" $((3 * 1024 * 1024 + 5))
rand_tensor "$A/m/config.json" 300
eq "tensorfs.copy from n2: progress ends at the total" "$((3 * 1024 * 1024 + 305))" \
	"$(out "${PY[@]}" - "$B/m" "$B/r" <<'PYEOF'
import sys, tensorfs
seen = []
tensorfs.copy(sys.argv[1], sys.argv[2], threads=3, progress=lambda d, t: seen.append((d, t)))
d, t = seen[-1]
print(d if d == t else "%d of %d" % (d, t))
PYEOF
)"
check "the tensor holds n1's bytes" cmp "$A/m/layers/0/w" "$B/r/layers/0/w"
check "the small one too" cmp "$A/m/config.json" "$B/r/config.json"
eq "the copy is n2's own" n2 "$(getfattr --absolute-names --only-values -n user.tensor.node "$B/r/layers/0/w")"
eq "the directory's metadata copied" '{"format":"pt"}' \
	"$(getfattr --absolute-names --only-values -n user.safetensors.metadata "$B/r")"
eq "an existing DEST: EEXIST" "EEXIST" "$(out "${PY[@]}" - "$B/m" "$B/r" <<'PYEOF'
import errno, sys, tensorfs
try:
    tensorfs.copy(sys.argv[1], sys.argv[2])
except tensorfs.Error as e:
    print(errno.errorcode[e.errno])
PYEOF
)"
eq "DEST inside SRC: EINVAL, nothing made" "EINVAL False" "$(out "${PY[@]}" - "$A/m" "$A/m/sub" <<'PYEOF'
import errno, os, sys, tensorfs
try:
    tensorfs.copy(sys.argv[1], sys.argv[2])
except tensorfs.Error as e:
    print(errno.errorcode[e.errno], os.path.exists(sys.argv[2]))
PYEOF
)"
client_tools
eq "tfs_copy from C: progress to the total" "copied $((3 * 1024 * 1024 + 305)) of $((3 * 1024 * 1024 + 305))" "$(out "$TOOL" copy "$B/m" "$B/c" | head -1)"
check "  its bytes" cmp "$A/m/layers/0/w" "$B/c/layers/0/w"
check "DEST with a trailing slash names DEST" "$TOOL" copy "$B/m/" "$B/c2/"
check "  its bytes" cmp "$A/m/config.json" "$B/c2/config.json"
# The cancel flag already set when the copy starts (deterministic; each thread also
# checks it before every 1 MiB it moves and every pull request).
check_err "cancelled through the cancel flag: EINTR" "EINTR" "$TOOL" copy "$B/m" "$B/x" cancel
gone "$B/x" "the cancelled copy"
check "n1's source untouched" cmp "$T/w.src" "$A/m/layers/0/w"
finish
