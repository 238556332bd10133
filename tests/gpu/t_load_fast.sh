# Issue 38's load paths on the cuda backend, byte-exact as another CUDA process reads the
# tensors through their handles: O_DIRECT reads into the pinned buffers (the DMA starting
# inside the buffer, at the piece's first byte) mapped and through the files, and the file
# registered with CUDA (TFS_LOAD_REGISTER=1: DMA from the page cache; where the driver
# refuses, the usual path, which the profile names), tensors at offsets and of sizes no
# multiple of the block, over several 1 MiB pieces.
. "$(dirname "$0")/gpulib.sh"
N1="O_DIRECT, mapped: every tensor byte-exact"
N2="O_DIRECT, through the files: every tensor byte-exact"
N3="TFS_LOAD_REGISTER=1, mapped: every tensor byte-exact"
N4="the profile says how the file was read"
gpu_tests "$N1" "$N2" "$N3" "$N4"
CTL="$GROOT/$GBUILD/tensorctl"
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 || exit 1
cd "$T"
python3 "$GROOT/tests/integration/load/st_make.py" m.safetensors 7 big:F32:1048579 \
	odd:U8:4097 one:U8:1 mid:BF16:12345 tail:U8:3 || exit 1
# same DIR: 0 when every tensor in DIR holds the file's bytes
same() {
	local bad=
	while read -r name off len; do
		cmp -s <(dump "$1/$name") <(tail -c +$((off + 1)) m.safetensors | head -c "$len") || bad="$bad $name"
	done < <(python3 -c "
import json, struct
d = open('m.safetensors', 'rb').read(); n = struct.unpack('<Q', d[:8])[0]
for k, v in json.loads(d[8:8 + n]).items():
    if k != '__metadata__':
        a, b = v['data_offsets']; print(k, 8 + n + a, b - a)")
	[ -z "$bad" ] || { echo "differ:$bad"; return 1; }
}
export TFS_LOAD_CHUNK_MB=1 TFS_LOAD_PROFILE=1
TENSORCTL_COPY=direct "$CTL" load -q --direct m.safetensors "$M/a" 2> p.a
check "$N1" same "$M/a"
TENSORCTL_COPY=fuse "$CTL" load -q --direct m.safetensors "$M/b" 2> p.b
check "$N2" same "$M/b"
TENSORCTL_COPY=direct TFS_LOAD_REGISTER=1 "$CTL" load -q m.safetensors "$M/c" 2> p.c
check "$N3" same "$M/c"
check "$N4" bash -c "grep -q 'O_DIRECT reads' p.a && grep -q 'O_DIRECT reads' p.b &&
	grep -Eq 'registered page cache|cudaHostRegister of .* refused' p.c"
cat p.c
rm -rf "$M"/*
cd /
finish
