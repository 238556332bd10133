# Sourced by tests/gpu/t_*.sh before anything else:
#   gpu_tests "name 1" "name 2" ...
# Without a CUDA device (no /dev/nvidiactl, or the helpers of tests/gpu/run.sh not built)
# it prints "skip - NAME: no CUDA device" for each name and exits 0: CI reports these tests
# as skipped, never passed. Otherwise it sources tests/integration/lib.sh and defines the
# GPU helpers below.
GROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GBUILD=${BUILD:-build}
CONSUMER="$GROOT/$GBUILD/gpu/consumer"
gpu_tests() {
	local why= n
	if [ ! -e /dev/nvidiactl ]; then
		why="no CUDA device"
	elif [ ! -x "$CONSUMER" ]; then
		why="no CUDA device: helpers not built ($GBUILD/gpu/consumer; run make test-gpu)"
	elif ! grep -q tfs_backend_cuda "$GROOT/$GBUILD/tensorfs" 2>/dev/null; then
		why="no CUDA device: $GBUILD/tensorfs built without CUDA"
	fi
	if [ -n "$why" ]; then
		for n in "$@"; do echo "skip - $n: $why"; done
		exit 0
	fi
	. "$GROOT/tests/integration/lib.sh"
	export CONSUMER
	export -f hexh dump
}
# hexh FILE: the IPC handle as 128 hex digits (what tests compare); the consumer's
# argument for FILE's memory is cons_handle FILE (tests/integration/lib.sh), which is the
# same for a legacy handle and @PATH for a VMM one
hexh() { getfattr --only-values -n user.tensor.ipc_handle "$1" | od -An -v -tx1 | tr -d ' \n'; }
# dump FILE [LEN]: the tensor's bytes as a separate CUDA process reads them through the handle
dump() {
	local f=$1 len=${2:-$(stat -c %s "$1")}
	"$CONSUMER" dump "$(cons_handle "$f")" "$(getfattr --only-values -n user.tensor.ipc_offset "$f")" "$len" 0
}
# pip_tensorfs DEST LOG: the Python package installed into DEST against this build's
# library (output in LOG). pip builds in the source tree (python/build), so two tests
# installing at once (tests/run.sh -j, or both memory modes run side by side) take turns.
pip_tensorfs() {
	flock "$GROOT/$GBUILD/.pip.lock" env TENSORFS_LIBRARY="$GROOT/$GBUILD/libtensorfs.so" \
		"${TFS_PYTHON:-python3}" -m pip install -q --no-build-isolation --no-deps \
		--target "$1" "$GROOT/python" > "$2" 2>&1
}
# mount_cuda DIR [options]: mount_tfs, then checks the daemon runs the cuda backend
mount_cuda() {
	mount_tfs "$@" || return 1
	[ "$BACKEND" = cuda ] && return 0
	echo "daemon on $1 is not on the cuda backend:"; cat "$T/$(basename "$1").log"; return 1
}
# vmm_refuses_gpu_prealloc DIR SPEC: a daemon with --memory vmm --preallocate SPEC (SPEC
# naming a GPU) refuses to start on DIR and says why: a GPU's reservation is of legacy
# blocks, which VMM tensors never use
vmm_refuses_gpu_prealloc() {
	mkdir -p "$1"
	! timeout 60 "$TFS" -f --redis "$URL" --log "$T/refused.log" --memory vmm \
		--preallocate "$2" "$1" 2>/dev/null &&
		grep -q "a GPU's reservation is made of legacy blocks" "$T/refused.log"
}
# wait_for CMD...: polls up to 10 s until CMD succeeds
wait_for() { local _i; for _i in $(seq 100); do "$@" && return 0; sleep 0.1; done; return 1; }
