#!/bin/sh
# Builds the GPU programs that test the CUDA backend directly: the backend's own test, linked
# with the daemon's objects as the Makefile builds them (libtfsdaemon.a, libtfscore.a: only
# what the test reaches is pulled in, and a new source file of the daemon comes with them),
# and the consumer, with gcc, cudart and (for its kernel, optional) nvcc.
#   tests/gpu/build_backend_test.sh [OUTDIR]      (default build/gpu)
# The daemon's build is OUTDIR's parent (build for build/gpu), brought up to date here with
# make. Produces OUTDIR/backend_cuda_test and OUTDIR/consumer; run OUTDIR/backend_cuda_test
# (it finds the consumer beside itself). EXTRA_CFLAGS is appended to the C flags.
set -eu
cd "$(dirname "$0")/../.."
O=${1:-build/gpu}
B=$(dirname "$O")
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export CUDA_HOME
CC=${CC:-gcc}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
# fs/ as -iquote, not -I, so that no header of the daemon can hide a system one.
CFLAGS="-std=gnu11 -O2 -g -pthread -D_GNU_SOURCE -Wall -Wextra -Wstrict-prototypes \
-Wmissing-prototypes -Werror -DTFS_HAVE_CUDA -isystem $CUDA_HOME/include -Ilib -Icore -iquote fs \
${EXTRA_CFLAGS:-}"
LIBS="-L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64 -lcudart -pthread"
# The consumer's VMM import loads libcuda.so.1 itself (dlopen), as the daemon does.
CULIB="-ldl"

mkdir -p "$O"
set -x
make -s O="$B" "$B/libtfsdaemon.a" "$B/libtfscore.a"
DAEMON_LIBS=$(make -s O="$B" daemon-libs)
case "$DAEMON_LIBS" in *-lcudart*) ;; *)
	echo "the build in $B has no CUDA backend (no $CUDA_HOME/include/cuda_runtime.h?)" >&2
	exit 1 ;;
esac
$CC $CFLAGS -o "$O/backend_cuda_test" tests/gpu/backend_cuda_test.c \
	-Wl,--start-group "$B/libtfsdaemon.a" "$B/libtfscore.a" -Wl,--end-group $DAEMON_LIBS $LIBS
if [ -x "$NVCC" ] || command -v "$NVCC" >/dev/null 2>&1; then
	# Default architecture plus its PTX, which the driver compiles for newer GPUs.
	"$NVCC" -O2 -c -o "$O/fill_kernel.o" tests/gpu/fill_kernel.cu
	$CC $CFLAGS -DTFS_TEST_KERNEL -o "$O/consumer" tests/gpu/consumer.c core/fd_request.c \
		"$O/fill_kernel.o" $LIBS $CULIB -lstdc++
else
	$CC $CFLAGS -o "$O/consumer" tests/gpu/consumer.c core/fd_request.c $LIBS $CULIB
fi
