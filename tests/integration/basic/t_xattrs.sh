# The attributes a tensor shows: an empty one's defaults, dtype and shape set (size,
# zeros, handle, offset, node, refcount, meta, listing) and the input forms accepted.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
meta_has_shape() { getfattr --only-values -n user.tensor.meta "$M/a" | grep -q '"shape":\[1024,1024\]'; }
lists_handle() { getfattr -d -m - "$M/a" | grep -q user.tensor.ipc_handle; }

check "touch makes an empty tensor" touch "$M/a"
eq "empty tensor has size 0" 0 "$(size_of "$M/a")"
eq "empty tensor dtype u8" u8 "$(xget "$M/a" dtype)"
eq "empty tensor shape [0]" "[0]" "$(xget "$M/a" shape)"
check "set dtype f32" setfattr -n user.tensor.dtype -v f32 "$M/a"
check "set shape [1024,1024]" setfattr -n user.tensor.shape -v '[1024,1024]' "$M/a"
eq "size is 4 MiB" 4194304 "$(size_of "$M/a")"
eq "bytes xattr" 4194304 "$(xget "$M/a" bytes)"
eq "shape xattr" "[1024,1024]" "$(xget "$M/a" shape)"
eq "new memory reads as zeros" 0 "$(tr -d '\0' < "$M/a" | wc -c)"
eq "ipc_handle is 64 bytes" 64 "$(getfattr --only-values -n user.tensor.ipc_handle "$M/a" | wc -c)"
eq "ipc_offset 0" 0 "$(xget "$M/a" ipc_offset)"
eq "node xattr" n1 "$(xget "$M/a" node)"
eq "refcount 1 when closed" 1 "$(xget "$M/a" refcount)"
check "meta is JSON with the shape" meta_has_shape
check "listxattr lists the tensor attributes" lists_handle
check "shape input '2,3,4' accepted" setfattr -n user.tensor.shape -v '2,3,4' "$M/a"
eq "shape normalised" "[2,3,4]" "$(xget "$M/a" shape)"
eq "size 96" 96 "$(size_of "$M/a")"
check "numpy dtype name accepted" setfattr -n user.tensor.dtype -v int32 "$M/a"
eq "dtype shown canonically" i32 "$(xget "$M/a" dtype)"
# meta's ctime_ns is the st_ctim stat shows, to the nanosecond (a first open by path
# matches the two), after a reshape and after a write, which moves st_ctim in the daemon
# without a record saved.
ctime_ns() { getfattr --only-values -n user.tensor.meta "$1" | sed -n 's/.*"ctime_ns":"\([0-9]*\)".*/\1/p'; }
stat_ns() { stat -c '%.9Z' "$1" | tr -d .; }
setfattr -n user.tensor.shape -v '[4,4]' "$M/a"
before=$(ctime_ns "$M/a")
eq "meta's ctime_ns is stat's st_ctim after a reshape" "$(stat_ns "$M/a")" "$before"
sleep 0.01
exec 3<>"$M/a"
printf 'abcd' >&3
eq "and after a write, the writer's descriptor still open" "$(stat_ns "$M/a")" "$(ctime_ns "$M/a")"
exec 3>&-
check "which moved it" test "$(ctime_ns "$M/a")" != "$before"
finish
