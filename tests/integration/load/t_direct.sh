# Loads that read the file with O_DIRECT (--direct, or --direct=auto when the file is not
# in the page cache; by default through the page cache): tensors at offsets and of sizes that are no multiple of the block, over
# several pieces, through the FUSE files and through the mapping, byte-exact; a cold
# file is read directly under --direct=auto and a cached one through the page cache; a cold
# file by default through the page cache; a file cut
# short is refused with nothing left.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
python3 "$ROOT/tests/integration/load/st_make.py" m.safetensors 3 big:F32:1048579 \
	odd:U8:4097 one:U8:1 mid:I16:12345 tail:U8:3 || exit 1
python3 - m.safetensors <<'PY' > want.txt
import json, struct, sys, hashlib
d = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", d[:8])[0]
for k, v in sorted(json.loads(d[8:8 + n]).items()):
    if k != "__metadata__":
        a, b = v["data_offsets"]
        print(k, hashlib.sha256(d[8 + n + a:8 + n + b]).hexdigest())
PY
# prof FILE CMD...: CMD with its stderr (the profile) in FILE
prof() { local f=$1; shift; "$@" 2> "$f"; }
got() { (cd "$1" && for f in $(ls | sort); do echo "$f $(sha256sum < "$f" | cut -d' ' -f1)"; done); }
# 1 MiB pieces: the 4 MiB tensor spans several, each at an unaligned file offset
export TFS_LOAD_CHUNK_MB=1 TFS_LOAD_PROFILE=1
for way in fuse map; do
	check "--direct, $way" prof "prof.$way" env TENSORCTL_COPY=$way "$CTL" load -q --direct m.safetensors "$M/d$way"
	check "--direct, $way: read with O_DIRECT" grep -q "O_DIRECT reads" "prof.$way"
	eq "--direct, $way: every tensor's bytes" "$(cat want.txt)" "$(got "$M/d$way")"
	check "--no-direct, $way" prof "prof.n$way" env TENSORCTL_COPY=$way "$CTL" load -q --no-direct m.safetensors "$M/n$way"
	check "--no-direct, $way: through the page cache" grep -q "page-cache reads" "prof.n$way"
	eq "--no-direct, $way: every tensor's bytes" "$(cat want.txt)" "$(got "$M/n$way")"
done
# The file's pages out of the page cache (written back first): auto reads directly, the
# default through the page cache.
drop() {
	sync m.safetensors
	python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' m.safetensors
}
drop
check "cold, --direct=auto" prof prof.cold "$CTL" load -q --direct=auto m.safetensors "$M/cold"
check "cold, --direct=auto: read with O_DIRECT" grep -q "O_DIRECT reads" prof.cold
eq "cold, --direct=auto: every tensor's bytes" "$(cat want.txt)" "$(got "$M/cold")"
drop
check "cold, by default" prof prof.cdef "$CTL" load -q m.safetensors "$M/cdef"
check "cold, by default: through the page cache" grep -q "page-cache reads" prof.cdef
eq "cold, by default: every tensor's bytes" "$(cat want.txt)" "$(got "$M/cdef")"
cat m.safetensors > /dev/null
check "cached, --direct=auto" prof prof.warm "$CTL" load -q --direct=auto m.safetensors "$M/warm"
check "cached, --direct=auto: through the page cache" grep -q "page-cache reads" prof.warm
check_err "--direct=other is refused" "direct" "$CTL" load -q --direct=yes m.safetensors "$M/bad"
check "TFS_LOAD_DIRECT=1 under --direct=auto reads a cached file directly" prof prof.env env TFS_LOAD_DIRECT=1 "$CTL" load -q --direct=auto m.safetensors "$M/env"
check "TFS_LOAD_DIRECT=1: O_DIRECT" grep -q "O_DIRECT reads" prof.env
eq "TFS_LOAD_DIRECT=1: every tensor's bytes" "$(cat want.txt)" "$(got "$M/env")"
check "the profile names the stages" grep -q "file reads" prof.cold
for d in dfuse dmap nfuse nmap cold cdef warm env; do "$CTL" rm -r "$M/$d" > /dev/null || exit 1; done
eq "no memory in use" 0 "$(used_bytes "$M")"
head -c $(( $(stat -c %s m.safetensors) - 100 )) m.safetensors > cut.safetensors
check_err "cut short, --direct: refused" "past the end" "$CTL" load -q --direct cut.safetensors "$M/cut"
check "nothing left" test ! -e "$M/cut"
eq "no memory in use after the refusal" 0 "$(used_bytes "$M")"
finish
