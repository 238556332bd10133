/* Shared by the benchmark programs (tfsbench.c, gpu_bench.c, lib_bench.c): a monotonic
 * clock in seconds and the comparator for sorting latencies. */
#ifndef TFS_BENCHUTIL_H
#define TFS_BENCHUTIL_H

#include <time.h>

static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#endif
