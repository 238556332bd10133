# --page-cache keeps no names (the queue could not drop them under the namespace lock);
# the default keeps them for a second.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
mount_tfs "$T/a" --node n1 || exit 1
mount_tfs "$T/d" --node n4 --page-cache || exit 1
check "--page-cache: names not kept" grep -q "names cached by the kernel for 0 s" "$T/d.log"
check "the default keeps them" grep -q "names cached by the kernel for 1 s" "$T/a.log"
finish
