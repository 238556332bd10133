#!/usr/bin/env bash
# The GPU tests (make test-gpu): run on a machine with an NVIDIA GPU and CUDA.
#   tests/gpu/run.sh [BUILD]        (default build; BUILD/tensorfs must be built with CUDA)
# 1. builds the helper programs (backend_cuda_test, consumer with its kernel) into BUILD/gpu;
# 2. runs the CUDA backend's unit test (tests/gpu/backend_cuda_test.c);
# 3. runs the whole suite of tests/run.sh on BUILD: unit tests, the integration tests (the
#    daemon picks the cuda backend by itself where /dev/nvidiactl exists) and the GPU tests
#    tests/gpu/t_*.sh, one job at a time (GPU_JOBS=N runs N at once: the daemons of the
#    integration tests then share the GPU, each with its keeper's CUDA context).
# GPU_MEMORY=vmm runs it all in --memory vmm (docs/vmm.md): every mount of the integration
# and GPU tests that names neither the host backend nor a memory mode (TFS_TEST_MEMORY=vmm,
# tests/integration/lib.sh; TFS_TEST_MEMORY for the Python tests' mounts too);
# backend_cuda_test is the same in both (its test_vmm covers VMM allocations). Tests that assert legacy IPC memory say "skip - ...: not in
# --memory vmm: why". Run it besides the default run: the suite passes in both modes.
# Ends with "N passed, N failed[, N skipped]". Without a GPU or nvcc every GPU test is
# reported as skipped and the script exits 0.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
case "${GPU_MEMORY:-ipc}" in
ipc) ;;
vmm) export TFS_TEST_MEMORY=vmm ;;
*) echo "GPU_MEMORY must be ipc or vmm"; exit 2 ;;
esac
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
[ -x "$NVCC" ] || NVCC=$(command -v nvcc 2>/dev/null || echo "$NVCC")
why=
if [ ! -e /dev/nvidiactl ]; then why="no CUDA device"
elif [ ! -x "$NVCC" ]; then why="no CUDA device: no nvcc"
elif ! grep -q tfs_backend_cuda "$B/tensorfs" 2>/dev/null; then why="no CUDA device: $B/tensorfs built without CUDA"
fi
if [ -n "$why" ]; then
	n=0
	echo "skip - backend_cuda_test (CUDA backend unit test): $why"; n=$((n + 1))
	echo "skip - integration suite on the cuda backend: $why"; n=$((n + 1))
	for f in tests/gpu/t_*.sh; do
		while IFS= read -r line; do
			case "$line" in "skip - "*) echo "${line%%: *}: $why"; n=$((n + 1)) ;; esac
		done < <(BUILD=/nonexistent bash "$f" 2>&1)
	done
	echo "0 passed, 0 failed, $n skipped"
	exit 0
fi

echo "# building the GPU helpers into $B/gpu"
if ! NVCC=$NVCC tests/gpu/build_backend_test.sh "$B/gpu" > "$B/gpu-build.log" 2>&1; then
	cat "$B/gpu-build.log"
	echo "not ok - building the GPU helpers"
	echo "0 passed, 1 failed"
	exit 1
fi
nvidia-smi -L 2>/dev/null | sed 's/^/# /'
echo "# memory mode: ${GPU_MEMORY:-ipc}"

. tests/tally.sh
t0=$SECONDS
count "$B/gpu/backend_cuda_test" < <(timeout 600 "$B/gpu/backend_cuda_test" ${BACKEND_TEST_ARGS:-} 2>&1;
	rc=$?; [ $rc -eq 0 ] || echo "not ok - backend_cuda_test exited $rc")
echo "# backend_cuda_test ${BACKEND_TEST_ARGS:-}: $((SECONDS - t0)) s"
t0=$SECONDS
# The whole suite on this build: unit, integration (cuda backend) and tests/gpu/t_*.sh.
count "suite" < <(tests/run.sh -j "${GPU_JOBS:-1}" "$B" 2>&1 | grep -v -E '^[0-9]+ passed, [0-9]+ failed|^failed:|^  \[')
echo "# tests/run.sh $B (unit, integration on cuda, tests/gpu/t_*.sh): $((SECONDS - t0)) s"
summary
