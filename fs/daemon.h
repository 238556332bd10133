/* State shared by the daemon's parts: options, the tensor table, the Redis link, the
 * backend. Private to fs/.
 *
 * LOCK ORDER. A thread may take a lock only while holding locks above it in this list:
 *
 *   1. tfs_d.ns          the namespace (tfs_ns_lock): the tensor table, every tensor's
 *                        metadata, every check-then-act on names. Metadata operations and
 *                        the queue worker take it; read and write do not.
 *   2. tensor->io        a tensor's rwlock. read/write hold it shared while copying, without
 *                        ns; resizing, freeing, owner moves and written marks hold it
 *                        exclusive, always under ns. So a thread holding io never takes ns
 *                        (op_write lets go of io before it takes ns to grow the tensor).
 *   2b. dirh->mu         an open directory's (ops_dir.c): a READDIR holds it, without ns,
 *                        while it fills the listing (node.c, dircache.c, Redis) and replies.
 *   3. backend locks     fs/cuda/ (slots, zeroing, marks, memfd areas, start-up; see
 *                        fs/cuda/cuda_internal.h), pool.c, backend_host.c: taken inside
 *                        backend calls only.
 *   4. leaves            writer.c's queue, dircache.c, kernel_cache.c, node.c, ops_dir.c's open
 *                        directories, loop.c, lockstats: each held for a few instructions,
 *                        calling out of its module with none of them held.
 *
 * No unbounded wait under ns or an exclusive io: Redis round trips under ns are bounded by
 * the command timeout (1 s); a create waits for its claim with ns released (ops_file.c),
 * and so does a resync for each chunk's claims (tensor.c: ns is held per chunk, never for
 * the whole table; a pass that runs long is no reason to hold it);
 * a read waits for the producer's written mark holding no lock of the tensor (it takes io
 * shared again after the wait, ops_file.c).
 * Dropping a name from the kernel takes the kernel's lock of its directory, which a
 * request holds while it waits for ns: it is done from kernel_cache.c's own thread, never
 * under ns. */
#ifndef TFS_DAEMON_H
#define TFS_DAEMON_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "mem/backend.h"
#include "redisconn.h"
#include "tensors/tensor.h"

struct tfs_opts {
	char *redis;             /* URL, NULL: start a private redis-server */
	char *backend;           /* "auto", "host", "cuda" */
	char *node;
	char *prefix;
	char *queue;
	char *queue_users;       /* --user-queues: names or uids with a queue of their own */
	char *max_bytes;         /* text: 64G, 512M, ... */
	char *devices;           /* --devices: "0,2,3", NULL: every device */
	char *log;               /* log file; default stderr (foreground) or syslog */
	int device;
	int threads;                 /* FUSE workers (--threads) */
	int restarts;                /* -o restarts=N: crashes the keeper restarts per minute */
	int foreground;
	int debug;
	int allow_other;
	int page_cache;              /* --page-cache: no direct_io (measurement only) */
	double entry_timeout;        /* -o entry_timeout: seconds the kernel keeps a name */
	int io_uring;                /* -o io_uring: serve over io_uring where the kernel allows */
	int io_uring_depth;          /* -o io_uring_depth=N: entries per queue */
	int show_help;
	int show_version;
};

struct tfs_daemon {
	struct tfs_opts o;
	struct tfs_redis_url url;
	char url_text[512];
	uint64_t max_bytes;
	uint64_t devmask;            /* the devices served (devices.h), set before serving */
	const struct tfs_backend_ops *be_ops;
	struct tfs_backend *be;
	pthread_mutex_t ns;          /* the namespace: table, tensor metadata, check-then-act */
	struct tfs_table table;
	volatile int stopping;
	volatile int redis_down;     /* a Redis call failed; the queue thread resyncs */
	volatile int lease_lost;     /* another daemon holds this node's lease (lease.h) */
	pid_t redis_pid;             /* private redis-server, 0 when --redis was given */
	char rundir[256];
	char node_queue[512];        /* the queue of commands forwarded to this node */
	pthread_t queue_thread;
	int queue_started;
	int splice_reads;            /* read replies splice from the backend (ops_file.c) */
};

extern struct tfs_daemon tfs_d;

/* The namespace lock, in one place: the one lock every metadata operation takes, so the
 * place to measure how long it is held and waited for. */
#ifdef TFS_LOCK_STATS
/* make LOCK_STATS=1: the lock's hold and wait times, logged at unmount (lockstats.c). */
void tfs_ns_lock(void);
void tfs_ns_unlock(void);
void tfs_ns_stats_log(void);
#else
static inline void tfs_ns_lock(void)
{
	pthread_mutex_lock(&tfs_d.ns);
}

static inline void tfs_ns_unlock(void)
{
	pthread_mutex_unlock(&tfs_d.ns);
}

static inline void tfs_ns_stats_log(void)
{
}
#endif

#endif
