/* The test pattern every GPU test program writes and checks: byte i of a range is byte
 * i & 7 of tfs_pattern_mix(seed, i >> 3). One definition for the C programs and for the
 * CUDA kernel in fill_kernel.cu, so the host and the device agree byte for byte. */
#ifndef TFS_TEST_PATTERN_H
#define TFS_TEST_PATTERN_H

#include <stdint.h>

#ifdef __CUDACC__
#define TFS_PATTERN_FN __host__ __device__ static inline
#else
#define TFS_PATTERN_FN static inline
#endif

TFS_PATTERN_FN uint64_t tfs_pattern_mix(uint64_t seed, uint64_t word)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + word;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

TFS_PATTERN_FN uint8_t tfs_pattern_byte(uint64_t seed, uint64_t i)
{
	return (uint8_t)(tfs_pattern_mix(seed, i >> 3) >> ((i & 7) * 8));
}

#endif
