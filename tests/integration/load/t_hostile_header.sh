# Hostile safetensors headers are refused before anything is made, each with one message
# and nothing left: a length past the file, JSON that is not an object, a shape whose size
# overflows, offsets that disagree with the shape, a name escaping the directory.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
python3 - <<'PY' || exit 1
import struct
def st(path, hdr, data=b""):
    j = hdr.encode(); j += b" " * ((8 - len(j) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(j)) + j + data)
open("len.safetensors", "wb").write(struct.pack("<Q", 1 << 62) + b"{}      ")
st("notobj.safetensors", '[1,2,3]')
st("overflow.safetensors", '{"a":{"dtype":"F32","shape":[4611686018427387904,8],"data_offsets":[0,8]}}', b"x" * 8)
st("mismatch.safetensors", '{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,8]}}', b"x" * 8)
st("escape.safetensors", '{"../a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
PY
for f in len notobj overflow mismatch escape; do
	"$CTL" load -q --format safetensors $f.safetensors "$M/$f" 2>err.txt
	rc=$?
	if [ $rc -ne 0 ] && [ "$(wc -l < err.txt)" -eq 1 ] && grep -q "^tensorctl: load: .*$f.safetensors" err.txt; then
		ok "$f: refused ($(cut -c1-100 err.txt))"
	else
		nok "$f: rc $rc, $(cat err.txt)"
	fi
	check "$f: nothing left" test ! -e "$M/$f"
done
eq "no memory in use" 0 "$(used_bytes "$M")"
finish
