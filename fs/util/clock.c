/* The daemon's clocks (clock.h). */
#include <time.h>

#include "util/clock.h"

int64_t tfs_now(void)
{
	return (int64_t)time(NULL);
}

int64_t tfs_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
