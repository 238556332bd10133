/* Reproducible random numbers for tests: splitmix64, and the log-uniform tensor sizes
 * that tests/unit/test_pool.c and tests/gpu/backend_cuda_test.c both draw (the same
 * generator and seed give the same mix in both). No libm: the unit-test rule links none. */
#ifndef TFS_TESTRAND_H
#define TFS_TESTRAND_H

#include <stdint.h>

static uint64_t rng_state;

static inline uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double unif(void)
{
	return (double)(rng() >> 11) * (1.0 / 9007199254740992.0);
}

/* 2^x for 0 <= x < 64. */
static inline double exp2_(double x)
{
	double r = 1, term = 1, f;
	int i, n = (int)x;

	f = (x - n) * 0.69314718055994530942;
	for (i = 1; i < 30; i++) {
		term *= f / i;
		r += term;
	}
	return r * (double)(1ull << n);
}

/* lo * 2^(u * log2(hi / lo)) with lo and hi powers of two. */
static inline uint64_t log_uniform(uint64_t lo, uint64_t hi)
{
	int l = __builtin_ctzll(lo), h = __builtin_ctzll(hi);

	return (uint64_t)exp2_(l + unif() * (h - l));
}

#endif
