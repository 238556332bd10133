# The Python package on the GPU (issue 17): tests/python/gpu/test_gpu.py under pytest with
# torch, CuPy and JAX, each test with its own redis-server and cuda-backend mount. The
# package is installed offline into a folder of this test (pip --no-build-isolation
# --target), against this build's libtensorfs.
. "$(dirname "$0")/gpulib.sh"
gpu_tests "python: tests/python/gpu (torch, CuPy, JAX through DLPack)"
PY=${TFS_PYTHON:-python3}
if ! "$PY" -c "import pytest, torch" 2>/dev/null; then
	echo "skip - python: tests/python/gpu (torch, CuPy, JAX through DLPack): $PY has no pytest or torch"
	exit 0
fi
PYLIB=$T/pylib
if pip_tensorfs "$PYLIB" "$T/pip.log"; then
	ok "python: pip install --no-build-isolation ./python"
else
	nok "python: pip install --no-build-isolation ./python"
	sed 's/^/      /' "$T/pip.log" | tail -20
fi
cd "$GROOT/tests/python"
TFS_BUILD=$GBUILD TFS_BACKEND=cuda XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH=$PYLIB \
	timeout 500 "$PY" -m pytest -q gpu 2>&1
rc=$?
[ $rc -eq 0 ] || nok "python: pytest tests/python/gpu exited $rc"
cd /
finish
exit $((FAILS > 0))
