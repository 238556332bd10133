#!/bin/sh
# Builds the GPU programs that test the CUDA backend directly: no libfuse, no Redis, only
# gcc, cudart and (for the consumer's kernel, optional) nvcc.
#   tests/gpu/build_backend_test.sh [OUTDIR]      (default build/gpu)
# Produces OUTDIR/backend_cuda_test and OUTDIR/consumer; run OUTDIR/backend_cuda_test
# (it finds the consumer beside itself). EXTRA_CFLAGS is appended to the C flags.
set -eu
cd "$(dirname "$0")/../.."
O=${1:-build/gpu}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
CC=${CC:-gcc}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
# fs/ as -iquote, not -I, so that no header of the daemon can hide a system one.
CFLAGS="-std=gnu11 -O2 -g -pthread -D_GNU_SOURCE -Wall -Wextra -Wstrict-prototypes \
-Wmissing-prototypes -Werror -DTFS_HAVE_CUDA -isystem $CUDA_HOME/include -Ilib -Icore -iquote fs \
${EXTRA_CFLAGS:-}"
LIBS="-L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64 -lcudart -pthread"

mkdir -p "$O"
set -x
$CC $CFLAGS -o "$O/backend_cuda_test" tests/gpu/backend_cuda_test.c fs/mem/cuda/*.c fs/mem/keeper/keeper_client.c fs/mem/keeper/handover.c fs/mem/keeper/keeper.c fs/mem/keeper/keeper_host.c core/log.c core/host_handle.c fs/mem/shm_sweep.c core/strutil.c core/fileio.c core/tier.c \
	fs/mem/pool.c fs/mem/pool_check.c $LIBS
if [ -x "$NVCC" ] || command -v "$NVCC" >/dev/null 2>&1; then
	# Default architecture plus its PTX, which the driver compiles for newer GPUs.
	"$NVCC" -O2 -c -o "$O/fill_kernel.o" tests/gpu/fill_kernel.cu
	$CC $CFLAGS -DTFS_TEST_KERNEL -o "$O/consumer" tests/gpu/consumer.c "$O/fill_kernel.o" \
		$LIBS -lstdc++
else
	$CC $CFLAGS -o "$O/consumer" tests/gpu/consumer.c $LIBS
fi
