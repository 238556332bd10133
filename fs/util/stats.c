/* The daemon's running counters (stats.h). Only the daemon knows how many FUSE requests
 * and queue commands it served; everything a client can find by itself (tensors, bytes,
 * holders) it finds in the mount (tensorctl top). */
#include <stdatomic.h>
#include <time.h>

#include "util/stats.h"

struct tfs_stats_slot tfs_stats_slots[TFS_STATS_SLOTS];
_Thread_local struct tfs_stats_slot *tfs_stats_mine;
static atomic_uint next_slot;
static struct timespec started;

static const char *const names[TFS_ST_COUNT] = {
	[TFS_ST_REQUESTS] = "requests",
	[TFS_ST_READS] = "reads",
	[TFS_ST_READ_BYTES] = "read_bytes",
	[TFS_ST_WRITES] = "writes",
	[TFS_ST_WRITE_BYTES] = "write_bytes",
	[TFS_ST_QUEUE_CMDS] = "queue_commands",
	[TFS_ST_URING_REQUESTS] = "uring_requests",
	[TFS_ST_FILLS] = "fills",
	[TFS_ST_FILL_BYTES] = "fill_bytes",
	[TFS_ST_NET_INPLACE_BYTES] = "net_inplace_bytes",
	[TFS_ST_NET_STAGED_BYTES] = "net_staged_bytes",
};

/* Threads beyond TFS_STATS_SLOTS share slots round robin: still exact, merely contended. */
struct tfs_stats_slot *tfs_stats_slot_pick(void)
{
	unsigned n = atomic_fetch_add_explicit(&next_slot, 1, memory_order_relaxed);

	tfs_stats_mine = &tfs_stats_slots[n % TFS_STATS_SLOTS];
	return tfs_stats_mine;
}

void tfs_stats_start(void)
{
	clock_gettime(CLOCK_MONOTONIC, &started);
}

static _Atomic int64_t writes_now;
static _Atomic int64_t writes_max;

void tfs_stats_write_begin(void)
{
	int64_t n = atomic_fetch_add_explicit(&writes_now, 1, memory_order_relaxed) + 1;
	int64_t m = atomic_load_explicit(&writes_max, memory_order_relaxed);

	while (n > m && !atomic_compare_exchange_weak_explicit(&writes_max, &m, n,
								memory_order_relaxed,
								memory_order_relaxed))
		;
}

void tfs_stats_write_end(void)
{
	atomic_fetch_sub_explicit(&writes_now, 1, memory_order_relaxed);
}

uint64_t tfs_stats_total(enum tfs_stat s)
{
	uint64_t sum = 0;

	for (int i = 0; i < TFS_STATS_SLOTS; i++)
		sum += atomic_load_explicit(&tfs_stats_slots[i].v[s], memory_order_relaxed);
	return sum;
}

int64_t tfs_stats_writes_max(void)
{
	return atomic_load_explicit(&writes_max, memory_order_relaxed);
}

double tfs_stats_uptime(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - started.tv_sec) +
	       (double)(now.tv_nsec - started.tv_nsec) / 1e9;
}

const char *tfs_stats_name(enum tfs_stat s)
{
	return names[s];
}
