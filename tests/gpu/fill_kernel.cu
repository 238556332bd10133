// A kernel for tests/gpu/consumer.c: writes the test pattern on the device, so the test
// checks that bytes a CUDA kernel of another process wrote through the IPC handle are what
// the backend's copy_out reads. The pattern is tests/gpu/pattern.h.
#include <stdint.h>
#include <cuda_runtime.h>

#include "pattern.h"

// Byte i of the region (which starts at byte offset base of the pattern).
__global__ static void fill(uint8_t *p, uint64_t n, uint64_t base, uint64_t seed)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t stride = (uint64_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		p[i] = tfs_pattern_byte(seed, base + i);
}

extern "C" int tfs_test_fill_kernel(void *p, uint64_t n, uint64_t base, uint64_t seed)
{
	fill<<<1024, 256>>>((uint8_t *)p, n, base, seed);
	if (cudaGetLastError() != cudaSuccess)
		return -1;
	return cudaDeviceSynchronize() == cudaSuccess ? 0 : -1;
}
