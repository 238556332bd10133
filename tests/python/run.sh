#!/usr/bin/env bash
# The Python package's tests, as `make test` runs them (tests/run.sh calls this):
#   tests/python/run.sh [BUILD]      (default build)
# Makes a venv with Debian's python3 (--system-site-packages: numpy, pytest, setuptools
# from Debian), installs ./python into it offline against BUILD/libtensorfs.so, and runs
# pytest on tests/python (each test with its own redis-server and host-backend mount).
# Prints "ok - " / "not ok - " / "skip - " lines that tests/tally.sh counts.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
PY=${TFS_PYTHON:-/usr/bin/python3}
V=$B/pyvenv
if ! "$PY" -c "import venv, pytest, numpy, setuptools" 2>/dev/null; then
	echo "skip - python: $PY lacks venv, pytest, numpy or setuptools (scripts/install-deps.sh installs them)"
	exit 0
fi
rm -rf "$V"
if ! "$PY" -m venv --system-site-packages "$V" > "$B/pyvenv.log" 2>&1 ||
   ! flock "$B/.pip.lock" env TENSORFS_LIBRARY="$PWD/$B/libtensorfs.so" \
	"$V/bin/pip" install --no-build-isolation ./python >> "$B/pyvenv.log" 2>&1; then
	sed 's/^/      /' "$B/pyvenv.log" | tail -30
	echo "not ok - python: venv and pip install --no-build-isolation ./python"
	exit 1
fi
echo "ok - python: pip install --no-build-isolation ./python (offline, into $V)"
# The ctypes-only fallback must not be what is tested: the C capsule destructor is built.
"$V/bin/python" -c "import tensorfs._capsule" 2>&1 || echo "not ok - python: tensorfs._capsule not built"
cd tests/python
TFS_BUILD=$B "../../$V/bin/python" -m pytest -q 2>&1
rc=$?
[ $rc -eq 0 ] || echo "not ok - python: pytest exited $rc"
