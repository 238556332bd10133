# A Python consumer opens the handle with CuPy exactly as docs/handles.md shows:
# cupy.cuda.runtime.ipcOpenMemHandle(os.getxattr(path, "user.tensor.ipc_handle")).
. "$(dirname "$0")/gpulib.sh"
gpu_tests "CuPy consumer reads the bytes through ipcOpenMemHandle" "CuPy consumer writes, read() sees it"
if ! python3 -c "import cupy" 2>/dev/null; then
	echo "skip - CuPy consumer reads the bytes through ipcOpenMemHandle: python3 has no cupy"
	echo "skip - CuPy consumer writes, read() sees it: python3 has no cupy"
	exit 0
fi
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 || exit 1
vmm_skip "CuPy's ipcOpenMemHandle opens legacy IPC handles only; a VMM tensor's handle grants nothing, its memory comes from the handle socket (docs/vmm.md)"
cd "$T"
PY="$GROOT/tests/gpu/cupy_consumer.py"

head -c 3000000 /dev/urandom > "$M/big"
for i in 1 2 3 4; do head -c 1000 /dev/urandom > "$M/small$i"; done
check "CuPy consumer reads the bytes through ipcOpenMemHandle" python3 "$PY" check "$M/big" "$M/small1" "$M/small2" "$M/small3" "$M/small4"
check "CuPy consumer writes, read() sees it" python3 "$PY" write "$M/big" "$M/small3"
rm -f "$M"/*
cd /
finish
