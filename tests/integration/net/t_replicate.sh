# tensorctl cp -r of another node's directory: every tensor made on this node with its
# dtype and shape, the bytes the owner's; the source untouched; DEST existing refused.
. "$(dirname "$0")/netlib.sh"
net_nodes
mkdir -p "$A/m/layers/0" "$A/m/layers/1"
setfattr -n user.safetensors.metadata -v '{"format":"pt"}' "$A/m"
for f in layers/0/w layers/1/w; do rand_tensor "$A/m/$f" $((2 * 1024 * 1024 + 17)); done
rand_tensor "$A/m/config.json" 300
touch "$A/m/empty"
f32_23 "$A/m/f"
printf 'ABCDEFGHIJKLMNOPQRSTUVWX' | dd of="$A/m/f" conv=notrunc status=none
check "cp -r from n1's directory into n2" "$CTL" cp -r -q "$B/m" "$B/r"
for f in layers/0/w layers/1/w config.json f; do
	check "$f: n2's copy holds n1's bytes" cmp "$A/m/$f" "$B/r/$f"
done
eq "the copy is n2's own" n2 "$(getfattr --absolute-names --only-values -n user.tensor.node "$B/r/layers/0/w")"
eq "dtype kept" f32 "$(getfattr --absolute-names --only-values -n user.tensor.dtype "$B/r/f")"
eq "shape kept" "[2,3]" "$(getfattr --absolute-names --only-values -n user.tensor.shape "$B/r/f")"
eq "empty tensor copied" 0 "$(stat -c %s "$B/r/empty")"
eq "the directory's metadata copied" '{"format":"pt"}' "$(getfattr --absolute-names --only-values -n user.safetensors.metadata "$B/r")"
check "n1's source untouched" cmp "$T/w.src" "$A/m/layers/1/w"
fails_with "an existing DEST: refused" "exists" "$CTL" cp -r "$B/m" "$B/r"
check "a single tensor without -r" "$CTL" cp -q "$B/m/f" "$B/f1"
check "  its bytes" cmp "$A/m/f" "$B/f1"
fails_with "a directory without -r: refused" "is a directory" "$CTL" cp "$B/m" "$B/r2"
gone "$B/r2" "refused cp"
check "tensorctl load of n1's directory: the same replica" "$CTL" load -q "$B/m" "$B/l"
for f in layers/0/w config.json f; do check "  $f" cmp "$A/m/$f" "$B/l/$f"; done
finish
