/* The daemon's running counters (stats.c): FUSE requests, bytes read and written, queue
 * commands. Read-only to the outside as the JSON value of the virtual attribute
 * user.tensorfs.stats on the mount's root (fuse/stats_xattr.h, tensorctl top).
 *
 * Counting is on the hot path of every request: each thread adds to a slot of its own
 * (a cache line, picked once per thread) with a relaxed atomic add, so workers never share
 * a line; a reader sums the slots. Totals are exact once the adds have returned, and
 * monotonic; a reader racing adds may see some of them and not others. No locks. */
#ifndef TFS_STATS_H
#define TFS_STATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum tfs_stat {
	TFS_ST_REQUESTS,         /* FUSE requests received by the worker loop */
	TFS_ST_READS,            /* read requests */
	TFS_ST_READ_BYTES,       /* bytes asked for by them */
	TFS_ST_WRITES,           /* write requests */
	TFS_ST_WRITE_BYTES,      /* bytes they carried */
	TFS_ST_QUEUE_CMDS,       /* lifecycle queue commands served (forwarded ones included) */
	TFS_ST_URING_REQUESTS,   /* of the FUSE requests, those that came over io_uring */
	TFS_ST_FILLS,            /* fills served: tensor ranges read from a file (fill_ioctl.h) */
	TFS_ST_FILL_BYTES,       /* bytes they filled */
	/* Another node's transfers (fs/net): bytes of this node's tensors sent to it from
	 * their memory in place and bytes of pulls received into tensors in place (host
	 * memory, no copy of the daemon's), and bytes copied between a tensor and a buffer
	 * instead (device memory, -o net_staged, remote writes, a span refused). */
	TFS_ST_NET_INPLACE_BYTES,
	TFS_ST_NET_STAGED_BYTES,
	TFS_ST_COUNT
};

#define TFS_STATS_SLOTS 64

struct tfs_stats_slot {
	_Atomic uint64_t v[TFS_ST_COUNT];
} __attribute__((aligned(64)));

extern struct tfs_stats_slot tfs_stats_slots[TFS_STATS_SLOTS];
extern _Thread_local struct tfs_stats_slot *tfs_stats_mine;

/* This thread's slot, assigned on its first count. Never fails. */
struct tfs_stats_slot *tfs_stats_slot_pick(void);

/* Adds n to counter s. Any thread, any lock held or none. */
static inline void tfs_stats_add(enum tfs_stat s, uint64_t n)
{
	struct tfs_stats_slot *sl = tfs_stats_mine ? tfs_stats_mine : tfs_stats_slot_pick();

	atomic_fetch_add_explicit(&sl->v[s], n, memory_order_relaxed);
}

/* A read, write or fill (s: TFS_ST_READS, TFS_ST_WRITES or TFS_ST_FILLS) of n bytes: counts the request
 * and, in the counter after s, its bytes. */
static inline void tfs_stats_io(enum tfs_stat s, uint64_t n)
{
	tfs_stats_add(s, 1);
	tfs_stats_add(s + 1, n);
}

/* Around the copy of one write request's bytes: how many are being copied at once, and the
 * most there have been since the start ("writes_together_max" in the JSON), which says
 * whether the kernel hands the daemon writes to one file together (reply_open.h). One
 * shared line, touched twice per write: against a copy of up to 1 MiB, nothing. */
void tfs_stats_write_begin(void);
void tfs_stats_write_end(void);

/* Records when the daemon started serving (for uptime). Call once before serving. */
void tfs_stats_start(void);

/* What a reader sees: counter s summed over the slots, the most writes copied at once,
 * the seconds since tfs_stats_start, the counter's name in the JSON. No lock. */
uint64_t tfs_stats_total(enum tfs_stat s);
int64_t tfs_stats_writes_max(void);
double tfs_stats_uptime(void);
const char *tfs_stats_name(enum tfs_stat s);

#endif
