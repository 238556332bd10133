// A kernel for tests/gpu/consumer.c: writes the test pattern on the device, so the test
// checks that bytes a CUDA kernel of another process wrote through the IPC handle are what
// the backend's copy_out reads. Same pattern as tfs_pattern_byte in the C programs.
#include <stdint.h>
#include <cuda_runtime.h>

__device__ static uint64_t mix(uint64_t seed, uint64_t word)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + word;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

// Byte i of the region (which starts at byte offset base of the pattern).
__global__ static void fill(uint8_t *p, uint64_t n, uint64_t base, uint64_t seed)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t stride = (uint64_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride) {
		uint64_t j = base + i;

		p[i] = (uint8_t)(mix(seed, j >> 3) >> ((j & 7) * 8));
	}
}

extern "C" int tfs_test_fill_kernel(void *p, uint64_t n, uint64_t base, uint64_t seed)
{
	fill<<<1024, 256>>>((uint8_t *)p, n, base, seed);
	if (cudaGetLastError() != cudaSuccess)
		return -1;
	return cudaDeviceSynchronize() == cudaSuccess ? 0 : -1;
}
