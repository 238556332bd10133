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

// Busy-waits about ns nanoseconds on the device (one thread), so the fill queued behind it
// on the same stream is still to come when the host has already returned.
__global__ static void spin(uint64_t ns)
{
	uint64_t t0 = clock64();

	// clock64 counts SM cycles; at >= 1 GHz this spins at least ns nanoseconds.
	while ((uint64_t)(clock64() - t0) < ns)
		;
}

// spin, then fill, both queued on stream and not waited for.
extern "C" int tfs_test_fill_kernel_async(void *p, uint64_t n, uint64_t base, uint64_t seed,
					  uint64_t spin_ns, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;

	spin<<<1, 1, 0, st>>>(spin_ns);
	fill<<<1024, 256, 0, st>>>((uint8_t *)p, n, base, seed);
	return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
