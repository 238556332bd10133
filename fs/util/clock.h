/* The daemon's clocks (clock.c). Any thread, no locks. */
#ifndef TFS_CLOCK_H
#define TFS_CLOCK_H

#include <stdint.h>

/* Seconds since the epoch: the times of records and attributes. */
int64_t tfs_now(void);
/* Nanoseconds of CLOCK_MONOTONIC: for intervals. */
int64_t tfs_mono_ns(void);

#endif
