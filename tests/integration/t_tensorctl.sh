# tensorctl (issue 5): create/ls/info/rm/df, load/save of raw, .npy and .safetensors with
# byte-identical round trips, bad input leaving nothing behind, mount/umount, progress bar.
. "$(dirname "$0")/lib.sh"
CTL="$ROOT/$BUILD/tensorctl"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
M2=$T/small
mount_tfs "$M2" --node n1 --prefix small --max-bytes 1M || exit 1
cd "$T"

# one-message, non-zero failures: fails_with DESC TEXT CMD...
fails_with() {
	local d=$1 e=$2; shift 2
	"$@" >"$T/last.out" 2>"$T/last.err"; local rc=$?
	if [ $rc -eq 0 ]; then nok "$d (succeeded, expected '$e')"; return; fi
	if grep -q -- "$e" "$T/last.err" && [ "$(wc -l < "$T/last.err")" -le 2 ] && grep -q '^tensorctl: ' "$T/last.err"; then
		ok "$d"
	else
		nok "$d (rc $rc, expected one message with '$e')"; sed 's/^/      /' "$T/last.err" | head -5
	fi
}
gone() { if [ -e "$1" ]; then nok "$2: $1 left behind"; else ok "$2: nothing left behind"; fi; }

# Test files, made with the Python standard library only (numpy may be missing).
cat > "$T/gen.py" <<'PY'
import json, struct, sys, random
random.seed(7)
def npy(path, descr, shape, data):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(str(x) for x in shape) + ("," if len(shape) == 1 else ""))
    total = (10 + len(d) + 1 + 63) // 64 * 64
    h = d + " " * (total - 10 - len(d) - 1) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + data)
SIZES = {"F64": 8, "I64": 8, "F32": 4, "I32": 4, "BF16": 2, "F16": 2, "U8": 1, "BOOL": 1}
def safetensors(path, tensors, metadata=None, hdr_override=None, extra=b""):
    # layout of the safetensors library: larger itemsize first, then by name
    order = sorted(tensors, key=lambda n: (-SIZES[tensors[n][0]], n))
    hdr, off, blob = {}, 0, b""
    if metadata is not None:
        hdr["__metadata__"] = metadata
    for n in order:
        dt, shape, data = tensors[n]
        hdr[n] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(data)]}
        off += len(data); blob += data
    if hdr_override: hdr_override(hdr)
    j = json.dumps(hdr, separators=(",", ":")).encode()
    j += b" " * ((8 - len(j) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(j)) + j + blob + extra)
def rnd(n): return bytes(random.getrandbits(8) for _ in range(n))
T = sys.argv[1]
npy(T + "/a.npy", "<f4", (3, 4, 5), rnd(240))
npy(T + "/b.npy", "|u1", (1000,), rnd(1000))
npy(T + "/s.npy", "<f8", (), rnd(8))
npy(T + "/big.npy", "<i8", (512, 1024), rnd(4 << 20))
npy(T + "/trunc.npy", "<f4", (3, 4, 5), rnd(200))
npy(T + "/over.npy", "<f4", (3, 4, 5), rnd(260))
open(T + "/hdrcut.npy", "wb").write(open(T + "/a.npy", "rb").read()[:40])
npy(T + "/fortran.npy", "<f4", (2,), rnd(8)); d = open(T + "/fortran.npy", "rb").read().replace(b"False", b"True ")
open(T + "/fortran.npy", "wb").write(d)
ts = {"embed.weight": ("F32", [4, 8], rnd(128)), "layers/0/bias": ("BF16", [8], rnd(16)),
      "layers/0/w": ("F16", [2, 3], rnd(12)), "ids": ("I64", [5], rnd(40)),
      "mask": ("BOOL", [3], bytes([1, 0, 1])), "scale": ("F64", [], rnd(8)), "empty": ("U8", [0], b"")}
safetensors(T + "/m.safetensors", ts, {"format": "pt", "note": "made by t_tensorctl"})
safetensors(T + "/nometa.safetensors", {"x": ("U8", [3], b"abc")})
def past_end(h): h["mask"]["data_offsets"] = [x + 64 for x in h["mask"]["data_offsets"]]
safetensors(T + "/past_end.safetensors", ts, None, past_end)
def overlap(h): h["mask"]["data_offsets"] = [0, 3]
safetensors(T + "/overlap.safetensors", ts, None, overlap)
def baddt(h): h["ids"]["dtype"] = "C64"
safetensors(T + "/baddtype.safetensors", ts, None, baddt)
safetensors(T + "/trailing.safetensors", ts, None, None, b"xyz")
d = open(T + "/m.safetensors", "rb").read()
open(T + "/hdrlen.safetensors", "wb").write(struct.pack("<Q", len(d) + 100) + d[8:])
open(T + "/short.safetensors", "wb").write(d[:5])
safetensors(T + "/badname.safetensors", {"../escape": ("U8", [1], b"x")})
safetensors(T + "/toobig.safetensors", {"a": ("U8", [1 << 20], bytes(1 << 20)), "b": ("U8", [1 << 20], bytes(1 << 20))})
PY
check "test files made (python3 stdlib)" python3 "$T/gen.py" "$T"

# help and usage
check "tensorctl --help" "$CTL" --help
for c in create ls info rm df stat load save mount umount; do
	check "$c --help" bash -c "'$CTL' $c --help | grep -q '^usage: tensorctl $c'"
done
fails_with "unknown command" "unknown command" "$CTL" frobnicate
fails_with "create without --shape" "required" "$CTL" create "$M/x" --dtype f32

# create / ls / info / rm / df
check "create f32 2,3,4" "$CTL" create "$M/a" --dtype f32 --shape 2,3,4
eq "created shape" "[2,3,4]" "$(xget "$M/a" shape)"
eq "created dtype" f32 "$(xget "$M/a" dtype)"
eq "created size" 96 "$(size_of "$M/a")"
check "create --shape [] --device 0" "$CTL" create "$M/sc" --dtype bfloat16 --shape '[]' --device 0
eq "scalar bf16 is 2 bytes" 2 "$(size_of "$M/sc")"
fails_with "create over an existing name" "File exists" "$CTL" create "$M/a" --dtype f32 --shape 2
fails_with "create with a bad dtype" "unknown dtype" "$CTL" create "$M/q" --dtype f33 --shape 2
fails_with "create with a bad shape" "bad shape" "$CTL" create "$M/q" --dtype f32 --shape 2,-3
gone "$M/q" "bad create"
fails_with "create on a missing device" "device 7" "$CTL" create "$M/q" --dtype f32 --shape 2 --device 7
gone "$M/q" "create on a missing device"
fails_with "create larger than the device" "No space left" "$CTL" create "$M2/big" --dtype f32 --shape 1024,1024
gone "$M2/big" "create larger than the device"
mkdir "$M/d"
check "ls lists names" bash -c "'$CTL' ls '$M' | tr '\n' ' ' | grep -qx 'a d/ sc '"
check "ls -l has dtype shape bytes device refcount node" bash -c "'$CTL' ls -l '$M' | grep -Eq '^f32 +\[2,3,4\] +96 +0 +1 +n1 +a$'"
check "ls -l header" bash -c "'$CTL' ls -l '$M' | head -1 | grep -q 'DTYPE.*SHAPE.*BYTES.*DEVICE.*REFCOUNT.*NODE'"
check "ls of one tensor" bash -c "'$CTL' ls -l '$M/a' | grep -q '96'"
check "TENSORFS_MOUNT makes names relative" bash -c "TENSORFS_MOUNT='$M' '$CTL' ls -l | grep -q ' a$'"
check "info shows everything" bash -c "'$CTL' info '$M/a' > info.out && grep -q '^dtype *f32' info.out && grep -q '^shape *\[2,3,4\]' info.out && grep -q '^ipc_handle *[0-9a-f]\{128\}' info.out && grep -q '^refcount *1' info.out && grep -q '^node *n1' info.out"
setfattr -n user.owner -v alice "$M/a"
check "info shows user attributes" bash -c "'$CTL' info '$M/a' | grep -q 'owner=alice'"
check "info --json is the meta object" bash -c "'$CTL' info --json '$M/a' | python3 -c 'import json,sys; m=json.load(sys.stdin); assert m[\"dtype\"]==\"f32\" and m[\"shape\"]==[2,3,4] and m[\"bytes\"]==96, m'"
fails_with "info of a missing tensor" "No such file" "$CTL" info "$M/nope"
fails_with "info of a directory" "Is a directory" "$CTL" info "$M/d"
check "df shows totals and a device line" bash -c "'$CTL' df '$M' > df.out && grep -q TOTAL df.out && grep -Eq '^device 0 +- +98 +- +2' df.out"
check "df --json counts tensors" bash -c "'$CTL' df --json '$M' | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"tensors\"]==2 and d[\"devices\"]==[{\"device\":0,\"tensors\":2,\"bytes\":98}] and d[\"total\"]>=d[\"used\"]>0, d'"
check "stat is df" bash -c "'$CTL' stat '$M/a' | grep -q TOTAL"
check "rm a tensor" "$CTL" rm "$M/sc"
gone "$M/sc" "rm"
fails_with "rm of a missing name" "No such file" "$CTL" rm "$M/sc"
check "rm -f of a missing name" "$CTL" rm -f "$M/sc"
check "rm an empty dir" "$CTL" rm "$M/d"
mkdir -p "$M/d/e" && "$CTL" create "$M/d/e/t" --dtype u8 --shape 4
fails_with "rm a full dir without -r" "not empty" "$CTL" rm "$M/d"
check "rm -r a tree" "$CTL" rm -r "$M/d"
gone "$M/d" "rm -r"

# raw load/save
head -c 3000000 /dev/urandom > raw.bin
check "load raw" "$CTL" load raw.bin "$M/raw"
check "raw bytes in the tensor" cmp raw.bin "$M/raw"
eq "raw is 1-D u8" "[3000000]" "$(xget "$M/raw" shape)"
check "save raw" "$CTL" save "$M/raw" raw.out
check "raw round trip byte-identical" cmp raw.bin raw.out
check "load raw with dtype and shape" "$CTL" load --dtype f32 --shape 750,1000 raw.bin "$M/rawf"
eq "raw dtype" f32 "$(xget "$M/rawf" dtype)"
eq "raw shape" "[750,1000]" "$(xget "$M/rawf" shape)"
fails_with "raw with a wrong shape" "needs" "$CTL" load --dtype f32 --shape 10 raw.bin "$M/rawbad"
gone "$M/rawbad" "raw with a wrong shape"
fails_with "save over an existing file" "File exists" "$CTL" save "$M/raw" raw.out
check "save -f replaces it" "$CTL" save -f "$M/rawf" raw.out
check "quiet when not on a terminal" bash -c "'$CTL' load raw.bin '$M/quiet' 2>err.txt && [ ! -s err.txt ]"

# .npy
for f in a b s big; do
	check "load $f.npy" "$CTL" load "$f.npy" "$M/n_$f"
	check "save $f.npy round trip byte-identical" bash -c "'$CTL' save '$M/n_$f' '$f.out.npy' && cmp '$f.npy' '$f.out.npy'"
done
check "direct path (TENSORCTL_COPY=direct) round trip" bash -c "TENSORCTL_COPY=direct '$CTL' load big.npy '$M/d_big' && TENSORCTL_COPY=direct '$CTL' save '$M/d_big' d.npy && cmp big.npy d.npy && cmp <(tail -c $((4 << 20)) big.npy) '$M/d_big'"
check "direct path safetensors round trip" bash -c "TENSORCTL_COPY=direct '$CTL' load m.safetensors '$M/d_m' && TENSORCTL_COPY=direct '$CTL' save '$M/d_m' d.safetensors && cmp m.safetensors d.safetensors"
check "FUSE path (TENSORCTL_COPY=fuse) round trip" bash -c "TENSORCTL_COPY=fuse '$CTL' load big.npy '$M/nd_big' && TENSORCTL_COPY=fuse '$CTL' save '$M/nd_big' nd.npy && cmp big.npy nd.npy && cmp <(tail -c $((4 << 20)) big.npy) '$M/nd_big'"
check "FUSE path safetensors round trip" bash -c "TENSORCTL_COPY=fuse '$CTL' load m.safetensors '$M/nd_m' && TENSORCTL_COPY=fuse '$CTL' save '$M/nd_m' nd.safetensors && cmp m.safetensors nd.safetensors"
eq "npy dtype" f32 "$(xget "$M/n_a" dtype)"
eq "npy shape" "[3,4,5]" "$(xget "$M/n_a" shape)"
eq "npy scalar shape" "[]" "$(xget "$M/n_s" shape)"
eq "npy i64 shape" "[512,1024]" "$(xget "$M/n_big" shape)"
check "npy data bytes are the file's tail" bash -c "cmp <(tail -c 240 a.npy) '$M/n_a'"
NPY_PY=
for py in python3 /usr/bin/python3; do "$py" -c 'import numpy' 2>/dev/null && { NPY_PY=$py; break; }; done
if [ -n "$NPY_PY" ]; then
	check "numpy reads the saved .npy" "$NPY_PY" -c "import numpy as np; a=np.load('a.out.npy'); assert a.shape==(3,4,5) and a.dtype==np.float32"
	check "np.save files load and save back byte-identical" "$NPY_PY" -c "
import numpy as np, subprocess
for i, (dt, sh) in enumerate([('<f4', (2, 3)), ('|u1', (7,)), ('<f8', ()), ('|b1', (2, 2)), ('<i2', (1, 2, 3)), ('<f2', (0,))]):
    a = (np.arange(int(np.prod(sh))) % 3).astype(dt).reshape(sh)
    np.save('np%d.npy' % i, a)
    subprocess.run(['$CTL', 'load', 'np%d.npy' % i, '$M/np%d' % i], check=True)
    subprocess.run(['$CTL', 'save', '$M/np%d' % i, 'np%d.out.npy' % i], check=True)
    assert open('np%d.npy' % i, 'rb').read() == open('np%d.out.npy' % i, 'rb').read(), (dt, sh)
    assert (np.load('np%d.out.npy' % i) == a).all()
"
else
	echo "skip - numpy not installed: numpy reading the saved .npy"
fi
"$CTL" create "$M/h" --dtype bf16 --shape 4
fails_with "bf16 has no .npy form" "no .npy equivalent" "$CTL" save "$M/h" h.npy
gone h.npy "failed save"
check "no temporary file left by a failed save" bash -c "! ls | grep -q tfs-"

# .safetensors
check "load safetensors" "$CTL" load m.safetensors "$M/m"
check "a directory of tensors" test -d "$M/m"
eq "safetensors dtype" bf16 "$(xget "$M/m/layers/0/bias" dtype)"
eq "safetensors shape" "[4,8]" "$(xget "$M/m/embed.weight" shape)"
eq "safetensors scalar" "[]" "$(xget "$M/m/scale" shape)"
eq "safetensors empty tensor" 0 "$(size_of "$M/m/empty")"
eq "metadata kept on the directory" '{"format":"pt","note":"made by t_tensorctl"}' "$(getfattr --only-values -n user.safetensors.metadata "$M/m" 2>/dev/null)"
check "save safetensors" "$CTL" save "$M/m" m.out.safetensors
check "safetensors round trip byte-identical" cmp m.safetensors m.out.safetensors
check "no-metadata round trip byte-identical" bash -c "'$CTL' load nometa.safetensors '$M/nm' && '$CTL' save '$M/nm' nm.out.safetensors && cmp nometa.safetensors nm.out.safetensors"
check "python reads the saved safetensors" python3 -c "
import json, struct
d = open('m.out.safetensors', 'rb').read(); n = struct.unpack('<Q', d[:8])[0]; h = json.loads(d[8:8+n])
assert h['__metadata__']['format'] == 'pt' and h['embed.weight']['shape'] == [4, 8]
assert max(v['data_offsets'][1] for k, v in h.items() if k != '__metadata__') == len(d) - 8 - n"
# Files written by safetensors 0.8.0 from PyTorch on the GPU machine (tests/data): the order
# of tensors in a saved file must be the library's, so they round trip byte for byte.
for f in torch-mixed torch-dtype-order; do
	check "$f.safetensors (made by PyTorch) round trips byte-identical" bash -c \
		"'$CTL' load '$ROOT/tests/data/$f.safetensors' '$M/$f' && '$CTL' save '$M/$f' '$f.out.safetensors' && cmp '$ROOT/tests/data/$f.safetensors' '$f.out.safetensors'"
done
# Files written by PyTorch itself (the GPU machine has torch and safetensors).
if python3 -c 'import torch, safetensors.torch' 2>/dev/null; then
	check "torch-written safetensors loads" python3 -c "
import torch, subprocess
from safetensors.torch import save_file
g = torch.Generator().manual_seed(1)
t = {'model.embed.weight': torch.randn(16, 8, generator=g).to(torch.bfloat16),
     'model.layers.0.w': torch.randn(8, 8, generator=g), 'ids': torch.arange(5),
     'mask': torch.tensor([True, False]), 'half': torch.randn(3, generator=g).half()}
save_file(t, 'pt.safetensors', metadata={'format': 'pt'})
subprocess.run(['$CTL', 'load', 'pt.safetensors', '$M/pt'], check=True)"
	eq "torch bf16 tensor keeps dtype" bf16 "$(xget "$M/pt/model.embed.weight" dtype)"
	check "saved back, torch reads equal tensors" python3 -c "
import torch, subprocess
from safetensors.torch import load_file
subprocess.run(['$CTL', 'save', '$M/pt', 'pt.out.safetensors'], check=True)
a, b = load_file('pt.safetensors'), load_file('pt.out.safetensors')
assert a.keys() == b.keys() and all(a[k].dtype == b[k].dtype and torch.equal(a[k], b[k]) for k in a)"
	check "torch-written safetensors round trip byte-identical" cmp pt.safetensors pt.out.safetensors
	check "torch.save'd tensor bytes load raw and match" python3 -c "
import torch, subprocess, os
x = torch.randn(1000)
open('raw.bin', 'wb').write(x.numpy().tobytes())
subprocess.run(['$CTL', 'load', '--dtype', 'f32', '--shape', '1000', 'raw.bin', '$M/torchraw'], check=True)
y = torch.frombuffer(bytearray(open('$M/torchraw', 'rb').read()), dtype=torch.float32)
assert torch.equal(x, y)"
else
	echo "skip - torch not installed: safetensors files written by PyTorch"
fi
if python3 -c 'import safetensors' 2>/dev/null; then
	check "safetensors library reads it" python3 -c "from safetensors import safe_open; f=safe_open('m.out.safetensors','np'); assert list(f.get_slice('ids').get_shape())==[5]"
else
	echo "skip - safetensors not installed: safetensors library reading the file"
fi
fails_with "save of a directory as npy" "directory saves only as safetensors" "$CTL" save --format npy "$M/m" x.npy

# bad input: a clear error, nothing half-made
fails_with "truncated .npy" "truncated" "$CTL" load trunc.npy "$M/t1"; gone "$M/t1" "truncated .npy"
fails_with "oversized .npy" "oversized" "$CTL" load over.npy "$M/t2"; gone "$M/t2" "oversized .npy"
fails_with ".npy with its header cut" "truncated" "$CTL" load hdrcut.npy "$M/t3"; gone "$M/t3" "cut header"
fails_with "Fortran-order .npy" "Fortran" "$CTL" load fortran.npy "$M/t4"; gone "$M/t4" "Fortran .npy"
fails_with "safetensors offsets past the end" "past the end" "$CTL" load past_end.safetensors "$M/s1"; gone "$M/s1" "offsets past the end"
fails_with "safetensors overlapping ranges" "overlap" "$CTL" load overlap.safetensors "$M/s2"; gone "$M/s2" "overlap"
fails_with "safetensors unknown dtype" "unknown dtype 'C64'" "$CTL" load baddtype.safetensors "$M/s3"; gone "$M/s3" "unknown dtype"
fails_with "safetensors header length larger than the file" "header length" "$CTL" load --format safetensors hdrlen.safetensors "$M/s4"; gone "$M/s4" "header length"
fails_with "safetensors trailing bytes" "after the last tensor" "$CTL" load trailing.safetensors "$M/s5"; gone "$M/s5" "trailing bytes"
fails_with "safetensors shorter than 8 bytes" "shorter than 8" "$CTL" load short.safetensors "$M/s6"; gone "$M/s6" "short file"
fails_with "safetensors name escaping the directory" "cannot be a file name" "$CTL" load badname.safetensors "$M/s7"; gone "$M/s7" "bad name"
fails_with "destination exists (tensor)" "File exists" "$CTL" load a.npy "$M/a"
eq "existing tensor untouched" "[2,3,4]" "$(xget "$M/a" shape)"
fails_with "destination exists (directory)" "File exists" "$CTL" load m.safetensors "$M/m"
mkdir -p "$T/plain"
fails_with "unmounted path" "not on a tensorfs mount" "$CTL" load a.npy "$T/plain/x"; gone "$T/plain/x" "unmounted path"
fails_with "ls of an unmounted path" "not on a tensorfs mount" "$CTL" ls "$T/plain"
fails_with "missing source file" "No such file" "$CTL" load nope.npy "$M/t5"; gone "$M/t5" "missing source"
head -c 2000000 /dev/urandom > two.bin
fails_with "no space on the device (raw)" "No space left" "$CTL" load two.bin "$M2/two"; gone "$M2/two" "no space (raw)"
fails_with "no space on the device (safetensors)" "No space left" "$CTL" load toobig.safetensors "$M2/tb"; gone "$M2/tb" "no space (safetensors)"
check "the small mount holds nothing after the failures" bash -c "[ -z \"\$(ls -A '$M2')\" ]"
eq "no memory left in use on the small mount" 0 "$(used_bytes "$M2")"

# progress bar on a terminal (script(1) gives it one)
head -c $((80 << 20)) /dev/urandom > p.bin   # >= 64 MiB: the two-thread direct copy
if command -v script >/dev/null; then
	check "progress bar on a terminal" bash -c "script -qec \"'$CTL' load p.bin '$M/p'\" /dev/null | tr '\r' '\n' | grep -Eq '[KMGT]iB/s ETA'"
	check "-q silences it" bash -c "[ -z \"\$(script -qec \"'$CTL' load -q p.bin '$M/p2'\" /dev/null)\" ]"
	check "progressed bytes are right" cmp p.bin "$M/p"
	check "large save round trip" bash -c "'$CTL' save '$M/p2' p.out && cmp p.bin p.out && TENSORCTL_COPY=fuse '$CTL' save -f '$M/p2' p.out && cmp p.bin p.out"
	check "large direct load (two threads)" bash -c "TENSORCTL_COPY=direct '$CTL' load p.bin '$M/p3' && cmp p.bin '$M/p3'"
else
	echo "skip - script(1) not installed: progress bar"
fi

# Ctrl-C in the middle of a load: the half-made tensor goes
head -c $((512 << 20)) /dev/zero > z.bin
TENSORCTL_COPY=fuse "$CTL" load z.bin "$M/intr" 2>intr.err &
lpid=$!
for _ in $(seq 200); do [ -e "$M/intr" ] && break; sleep 0.01; done
sleep 0.1
kill -INT $lpid 2>/dev/null
wait $lpid; lrc=$?
if [ $lrc -eq 0 ]; then
	echo "skip - interrupted load: it finished before the signal"
else
	check "interrupted load says so" grep -q "tensorctl: load: .*nterrupted" intr.err
	gone "$M/intr" "interrupted load"
fi
rm -f z.bin

# mount / umount wrappers
M3=$T/m3
mkdir -p "$M3"
check "tensorctl mount" "$CTL" mount "$M3" --redis "$URL" --prefix m3 --log "$T/m3.log"
check "it is mounted" mountpoint -q "$M3"
check "usable through tensorctl" bash -c "'$CTL' create '$M3/z' --dtype u8 --shape 3 && '$CTL' ls '$M3' | grep -qx z && '$CTL' rm '$M3/z'"
check "tensorctl umount" "$CTL" umount "$M3"
for _ in $(seq 50); do mountpoint -q "$M3" || break; sleep 0.1; done
check "it is unmounted" bash -c "! mountpoint -q '$M3'"
fails_with "umount of a plain directory" "not a tensorfs mount point" "$CTL" umount "$T/plain"
fails_with "umount of a directory inside a mount" "not a tensorfs mount point" "$CTL" umount "$M/n_a"
# a mount whose daemon died: a clear error, and umount still cleans it up
M4=$T/m4
mkdir -p "$M4"
"$CTL" mount "$M4" --redis "$URL" --prefix m4 --log "$T/m4.log"
pid4=$(ps -eo pid=,args= | awk -v m="$M4" '$2 ~ /tensorfs$/ && $NF == m {print $1}' | head -1)
if [ -n "$pid4" ] && kill -9 "$pid4"; then
	sleep 0.3
	fails_with "ls of a mount whose daemon died" "daemon is gone" "$CTL" ls "$M4"
	check "umount of a dead mount" "$CTL" umount "$M4"
	check "dead mount gone" bash -c "! mountpoint -q '$M4'"
else
	nok "could not find the daemon of $M4"
fi
check_err "mount with bad options" "tensorctl: mount: .*failed" "$CTL" mount "$M3" --no-such-option

check "rm -rf everything" bash -c "rm -rf '$M'/*"
sleep 0.2
eq "statfs used back to 0" 0 "$(used_bytes "$M")"
cd /
finish
