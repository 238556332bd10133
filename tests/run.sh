#!/usr/bin/env bash
# Runs the unit tests and the integration tests for each build folder given (default:
# build build-asan), then the library's tests under valgrind on the first build without
# ASan, and ends with the line "N passed, N failed[, N skipped]".
# Integration tests need root (FUSE mounts), redis-server, fusermount3, getfattr.
# TESTS="basic/t_xattrs queue/t_batch posix/t_efbig" limits the integration files run
# ("python": the Python package's tests, tests/python/run.sh).
set -u
cd "$(dirname "$0")/.."
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=(build build-asan)
# LeakSanitizer: a leak makes the daemon exit non-zero, which teardown reports. The
# reports go to files (a daemon's stderr is its log, which a test may have removed), and
# each one found after a test is a failure of that test, shown in full.
SAN_DIR=$(mktemp -d /tmp/tfs-san.XXXXXX)
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=23:log_path=$SAN_DIR/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$SAN_DIR/ubsan"
# san_reports NAME: a "not ok" per sanitizer report written since the last call.
san_reports() {
	local f
	for f in "$SAN_DIR"/*; do
		[ -e "$f" ] || continue
		echo "not ok - $1: sanitizer report $(basename "$f")"
		sed 's/^/      /' "$f" | head -60
		rm -f "$f"
	done
}

. tests/tally.sh

for b in "${builds[@]}"; do
	for t in "$b"/tests/test_*; do
		[ -x "$t" ] || continue
		count "$b/$(basename "$t")" < <("$t" 2>&1; rc=$?; [ $rc -eq 0 ] || echo "not ok - $(basename "$t") exited $rc"; san_reports "$(basename "$t")")
	done
	for f in tests/integration/*/t_*.sh; do
		[ -e "$f" ] || continue
		name=${f#tests/integration/}; name=${name%.sh}
		if [ -n "${TESTS:-}" ] && [[ " $TESTS " != *" $name "* ]]; then continue; fi
		t0=$SECONDS
		count "$b/$name" < <(BUILD="$b" timeout 600 bash "$f" 2>&1; rc=$?; [ $rc -eq 0 ] || echo "not ok - $name exited $rc"; san_reports "$name")
		echo "    # $b/$name: $((SECONDS - t0)) s"
	done
	# The Python package (tests/python/run.sh: venv, offline pip install, pytest), on builds
	# without ASan: an ASan libtensorfs cannot be loaded into python3.
	if [[ "$b" != *asan* ]] && { [ -z "${TESTS:-}" ] || [[ " $TESTS " == *" python "* ]]; }; then
		t0=$SECONDS
		count "$b/python" < <(timeout 900 tests/python/run.sh "$b" 2>&1; rc=$?; [ $rc -eq 0 ] || echo "not ok - python exited $rc")
		echo "    # $b/python: $((SECONDS - t0)) s"
	fi
	# GPU tests: without a CUDA device (or before make test-gpu built their helpers) each
	# prints "skip - ..." lines.
	for f in tests/gpu/t_*.sh; do
		[ -e "$f" ] || continue
		name=gpu/$(basename "$f" .sh)
		if [ -n "${TESTS:-}" ] && [[ " $TESTS " != *" $(basename "$f" .sh) "* ]]; then continue; fi
		t0=$SECONDS
		count "$b/$name" < <(BUILD="$b" timeout 600 bash "$f" 2>&1; rc=$?; [ $rc -eq 0 ] || echo "not ok - $name exited $rc")
		[ -e /dev/nvidiactl ] && echo "    # $name: $((SECONDS - t0)) s"
	done
done
# The valgrind pass (issue 4): the unit tests of libtensorfs and the client tests
# (tests/integration/client/, TFS_VALGRIND=1: their client programs run under
# tests/valgrind.sh; the daemon stays native, ASan checks it), on the first build given
# without ASan (its programs cannot run under valgrind).
vgb=
for b in "${builds[@]}"; do [[ "$b" == *asan* ]] || { vgb=$b; break; }; done
vgtests=(test_client test_lib)
for f in tests/integration/client/t_*.sh; do
	name=${f#tests/integration/}; name=${name%.sh}
	if [ -z "${TESTS:-}" ] || [[ " $TESTS " == *" $name "* ]]; then vgtests+=("$name"); fi
done
for t in "${vgtests[@]}"; do
	if [ -z "$vgb" ]; then
		count "valgrind/$t" <<< "skip - $t under valgrind: no build without ASan among: ${builds[*]}"
	elif ! command -v valgrind >/dev/null; then
		count "$vgb/valgrind/$t" <<< "skip - $t under valgrind: valgrind is not installed (scripts/install-deps.sh installs it)"
	elif [[ "$t" == client/* ]]; then
		count "$vgb/valgrind/$t" < <(TFS_VALGRIND=1 BUILD="$vgb" timeout 600 bash "tests/integration/$t.sh" 2>&1; rc=$?; [ $rc -eq 0 ] || echo "not ok - $t under valgrind exited $rc")
	else
		count "$vgb/valgrind/$t" < <(tests/valgrind.sh "$vgb/tests/$t" 2>&1; rc=$?; [ $rc -eq 0 ] || echo "not ok - $t under valgrind exited $rc")
	fi
done
rm -rf "$SAN_DIR"
summary
