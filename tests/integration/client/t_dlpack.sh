# DLPack export of a host tensor: CPU device, its dtype and dims, its bytes; the deleter
# unmaps it.
. "$(dirname "$0")/../lib.sh"
client_mount
f32_23 "$M/a"
"$TOOL" fill "$M/a" 0x7f >/dev/null
eq "DLPack export: CPU device, f32, 2 dims; deleter unmaps" \
	"device 1 code 2 bits 32 ndim 2 first 127 cache 1 cache 0 done" \
	"$(out "$TOOL" dlpack "$M/a" | xargs)"
finish
