#!/bin/bash
# Open latency of a VMM tensor from a fresh process (descriptor over the handle socket,
# cuMemImportFromShareableHandle, reserve, map, access) beside the legacy open
# (cudaIpcOpenMemHandle), docs/vmm.md. Two mounts on one Redis, one per memory mode; in
# each, N fresh processes (tests/integration/tfs_client_tool info) open a 64 MiB tensor.
# The baseline, info of a tensor of 0 bytes (maps nothing, starts no CUDA), is subtracted:
# what remains is the open itself, the process's CUDA start-up included in both modes.
#   tests/bench/vmm_open.sh [N]          (GPU machine; default N 20)
. "$(dirname "$0")/../gpu/gpulib.sh"
gpu_tests "vmm open latency bench"
N=${1:-20}
start_redis || exit 1
client_tools
mount_cuda "$T/ipc" --node n1 || exit 1
mount_cuda "$T/vmm" --node n2 --memory vmm || exit 1
# median_ms CMD...: the median wall time of N runs of CMD, in ms
median_ms() {
	local i s e
	for i in $(seq "$N"); do
		s=$(date +%s%N); "$@" >/dev/null 2>&1 || { echo fail; return; }; e=$(date +%s%N)
		echo $(( (e - s) / 1000 ))
	done | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}
# The two mounts share one namespace (one Redis): each mode's tensors get their own names,
# or the second mount would open the first's tensors as another node's.
for m in ipc vmm; do
	head -c 67108864 /dev/urandom > "$T/$m/t_$m" || { echo "not ok - vmm open latency bench: writing t_$m"; exit 1; }
	touch "$T/$m/empty_$m" || { echo "not ok - vmm open latency bench: empty_$m"; exit 1; }
	full=$(median_ms "$TOOL" info "$T/$m/t_$m")
	base=$(median_ms "$TOOL" info "$T/$m/empty_$m")
	echo "# $m: fresh process tfs_open of 64 MiB: median $full ms; of 0 bytes: $base ms; open's own: $(awk "BEGIN {printf \"%.2f\", $full - $base}") ms"
done
umount_tfs "$T/ipc"; umount_tfs "$T/vmm"
finish
