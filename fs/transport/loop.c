/* The daemon's multi-threaded FUSE loop: a fixed set of workers, each receiving requests
 * into a buffer of its own that the backend provides (libfuse's fuse_loop_mt mallocs
 * them itself).
 *
 * Why not fuse_loop_mt: with the kernel writing a write request's bytes straight into
 * pinned memory, the cuda backend copies them to the device with one DMA instead of a CPU
 * copy into staging first; the host backend copies once, from the buffer into its shared
 * memory. Splice reading is off (ops_table.c) for the same reason: with direct I/O the kernel
 * copies the bytes into the pipe anyway, and libfuse then copies them out again into
 * memory for a write().
 *
 * Workers take turns to receive: at most max(RECEIVERS, busy + 1) wait on /dev/fuse at
 * once, busy being the workers serving a request, and one that got a request hands its
 * turn to the worker that went idle last. The kernel wakes waiting readers first come,
 * first served: with all 32 waiting, one stream of 1 MiB writes cycles through 32 request
 * buffers, each cold in the cache by its turn, and the kernel's copy of a write's bytes
 * into it is slower than into a warm one. Taken last in, first out, the turns keep a
 * stream on RECEIVERS + 1 buffers, as libfuse's loop, which starts threads only as
 * requests need them, does. The kernel copies a write's bytes into the buffer within the
 * read, so the receivers bound how many writes are copied at once: each busy worker is
 * most likely one stream waiting for its answer, about to send the next request, so
 * there is a turn for each (8 streams writing one file, which the open reply lets the
 * kernel hand over together: 2 turns carried 13 GB/s on the H200, nullfs 45).
 *
 * Shutdown follows fuse_loop_mt: workers block every signal, so SIGINT/SIGTERM reach the
 * main thread, whose handler (fuse_set_signal_handlers) ends the session; the main thread
 * then cancels the workers, which accept cancellation only while waiting for a request. */

#include <errno.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "transport/loop.h"
#include "transport/loop_uring.h"
#include "util/stats.h"
#include "store/writer.h"
#include "log.h"
#include "util/clock.h"
#include "mem/backend.h"
#ifdef TFS_LOCK_STATS
#include "tensors/tensors.h"
#endif

#ifndef TFS_RECEIVERS
#define TFS_RECEIVERS 2     /* overridable for measurement (tests/bench/fusepath.sh) */
#endif
#define RECEIVERS TFS_RECEIVERS

/* What one request can need: a 1 MiB write (max_write) or a 64 KiB xattr value, plus
 * headers. libfuse reads up to its own buffer size, 256 pages + 4 KiB, which this covers. */
#define REQ_BUF_BYTES ((size_t)(1 << 20) + (64 << 10))

#ifdef TFS_PROFILE_IO
/* Per opcode (the ones past 63 share the last slot): requests, ns from the receive to the
 * return of process_buf (the op and its reply's write), ns in the receive before it
 * (idle included); and ns spent copying a read's [0] or a write's [1] bytes. */
#define PROF_OPS 64
static uint64_t prof_n[PROF_OPS], prof_ns[PROF_OPS], prof_recv_ns[PROF_OPS], prof_copy_ns[2];

uint64_t tfs_prof_now(void)
{
	return (uint64_t)tfs_mono_ns();
}

void tfs_prof_copy(int write, uint64_t ns)
{
	__atomic_add_fetch(&prof_copy_ns[write ? 1 : 0], ns, __ATOMIC_RELAXED);
}

/* The opcode of the request in buf (struct fuse_in_header: len, then opcode). */
static unsigned prof_op(const struct fuse_buf *b)
{
	uint32_t op;

	memcpy(&op, (const char *)b->mem + 4, sizeof(op));
	return op < PROF_OPS ? op : PROF_OPS - 1;
}

static void prof_account(const struct fuse_buf *b, uint64_t t_recv, uint64_t t0, uint64_t t1)
{
	unsigned k = prof_op(b);

	__atomic_add_fetch(&prof_n[k], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&prof_ns[k], t1 - t0, __ATOMIC_RELAXED);
	__atomic_add_fetch(&prof_recv_ns[k], t0 - t_recv, __ATOMIC_RELAXED);
}

static void prof_print(void)
{
	for (unsigned k = 0; k < PROF_OPS; k++) {
		double n = (double)prof_n[k];
		char copy[64] = "";

		if (!prof_n[k])
			continue;
		if (k == 15 || k == 16)       /* FUSE_READ, FUSE_WRITE */
			snprintf(copy, sizeof(copy), ", %.1f us copying", prof_copy_ns[k - 15] / 1e3 / n);
		tfs_log(LOG_NOTICE, "profile: opcode %u: %llu requests, %.1f us in receive (incl. "
			"idle), %.1f us in the op (incl. reply)%s", k, (unsigned long long)prof_n[k],
			prof_recv_ns[k] / 1e3 / n, prof_ns[k] / 1e3 / n, copy);
	}
}
#endif

struct worker {
	pthread_t thread;
	int started;
	struct fuse_buf fbuf;
	pthread_cond_t turn_cv;
	int has_turn;
	int busy;                   /* serving a request it received; counted in lp.busy */
	struct worker *next_idle;
};

static struct {
	struct fuse_session *se;
	sem_t finish;
	int err;
	pthread_mutex_t mu;         /* err, and the turns: */
	int receiving;              /* workers holding a turn (waiting in or reading /dev/fuse) */
	int busy;                   /* workers serving a request */
	struct worker *idle;        /* workers waiting for a turn, the last come first */
	int stopping;               /* the session ended: no more turns */
} lp = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* How many may receive at once; under lp.mu. */
static int turns(void)
{
	return lp.busy + 1 > RECEIVERS ? lp.busy + 1 : RECEIVERS;
}

/* Waits for a turn to receive: 0 with it held, -1 when the loop is stopping. The caller's
 * last request, if any, is served. */
static int take_turn(struct worker *w)
{
	pthread_mutex_lock(&lp.mu);
	if (w->busy) {
		w->busy = 0;
		lp.busy--;
	}
	if (lp.receiving < turns() && !lp.stopping) {
		lp.receiving++;
		w->has_turn = 1;
	} else if (!lp.stopping) {
		w->has_turn = 0;
		w->next_idle = lp.idle;
		lp.idle = w;
		while (!w->has_turn && !lp.stopping)
			pthread_cond_wait(&w->turn_cv, &lp.mu);
	}
	pthread_mutex_unlock(&lp.mu);
	return w->has_turn ? 0 : -1;
}

/* Gives the caller's turn back, got: it received a request, which it now serves; turns
 * free go to the workers that went idle last. */
static void give_turn(struct worker *w, int got)
{
	struct worker *n;

	pthread_mutex_lock(&lp.mu);
	w->has_turn = 0;
	lp.receiving--;
	if (got) {
		w->busy = 1;
		lp.busy++;
	}
	while ((n = lp.idle) && lp.receiving < turns()) {
		lp.idle = n->next_idle;
		n->has_turn = 1;
		lp.receiving++;
		pthread_cond_signal(&n->turn_cv);
	}
	pthread_mutex_unlock(&lp.mu);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int res;

	/* Cancelled only while receiving: one cancelled waiting for a turn would leave lp.mu
	 * locked (pthread_cond_wait takes it back first). */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	while (!fuse_session_exited(lp.se)) {
		if (take_turn(w))
			break;
		/* The buffer is always ours: libfuse reads into it and mallocs nothing. */
		w->fbuf.size = REQ_BUF_BYTES;
		w->fbuf.flags = 0;
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
#ifdef TFS_PROFILE_IO
		uint64_t t_recv = tfs_prof_now(), t0;
#endif
		res = fuse_session_receive_buf(lp.se, &w->fbuf);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		give_turn(w, res > 0);
		if (res == -EINTR)
			continue;
		if (res <= 0) {
			if (res < 0) {
				pthread_mutex_lock(&lp.mu);
				if (!lp.err)
					lp.err = res;
				pthread_mutex_unlock(&lp.mu);
			}
			fuse_session_exit(lp.se);
			break;
		}
		tfs_stats_add(TFS_ST_REQUESTS, 1);
#ifdef TFS_PROFILE_IO
		t0 = tfs_prof_now();
#endif
		tfs_writer_defer_wakes(1);
#ifdef TFS_LOCK_STATS
		memcpy(&tfs_ns_tag, (const char *)w->fbuf.mem + 4, sizeof(tfs_ns_tag));
#endif
		fuse_session_process_buf(lp.se, &w->fbuf);
#ifdef TFS_LOCK_STATS
		tfs_ns_tag = 0;
#endif
		tfs_writer_defer_wakes(0);
#ifdef TFS_PROFILE_IO
		prof_account(&w->fbuf, t_recv, t0, tfs_prof_now());
#endif
	}
	sem_post(&lp.finish);
	return NULL;
}

int tfs_loop_run(struct fuse_session *se, int nworkers)
{
	struct worker *ws;
	sigset_t all, old;
	uint8_t *region = NULL;
	size_t ring_bytes = tfs_uring_region_bytes();
	int i, rc = 0;

	if (nworkers < 1)
		nworkers = 1;
	ws = calloc((size_t)nworkers, sizeof(*ws));
	if (!ws)
		return -ENOMEM;
	if (tfs_mem.ops->io_region)
		region = tfs_mem.ops->io_region(tfs_mem.be,
						 (size_t)nworkers * REQ_BUF_BYTES + ring_bytes);
	/* The backend gives one region: the io_uring entries' buffers are its tail. */
	if (region && ring_bytes)
		tfs_uring_give_region(region + (size_t)nworkers * REQ_BUF_BYTES);
	for (i = 0; i < nworkers; i++) {
		pthread_cond_init(&ws[i].turn_cv, NULL);
		ws[i].fbuf.mem = region ? region + (size_t)i * REQ_BUF_BYTES : malloc(REQ_BUF_BYTES);
		if (!ws[i].fbuf.mem) {
			rc = -ENOMEM;
			goto out_bufs;
		}
	}
	lp.se = se;
	lp.err = 0;
	lp.receiving = 0;
	lp.busy = 0;
	lp.idle = NULL;
	lp.stopping = 0;
	if (sem_init(&lp.finish, 0, 0)) {
		rc = -errno;
		goto out_bufs;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < nworkers; i++) {
		int e = pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]);

		if (e) {
			tfs_log(LOG_ERR, "cannot start FUSE worker %d: %s", i, strerror(e));
			rc = -e;
			fuse_session_exit(lp.se);
			break;
		}
		ws[i].started = 1;
		pthread_setname_np(ws[i].thread, "tfs-fuse");
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	tfs_log(LOG_INFO, "serving with %d FUSE worker threads (request buffers: %s)", nworkers,
		region ? "from the backend" : "malloc");

	/* A signal interrupts the wait; a worker that saw the unmount posts. */
	while (!fuse_session_exited(lp.se))
		sem_wait(&lp.finish);
	/* Those waiting for a turn leave; those receiving are cancelled. */
	pthread_mutex_lock(&lp.mu);
	lp.stopping = 1;
	for (i = 0; i < nworkers; i++)
		pthread_cond_signal(&ws[i].turn_cv);
	pthread_mutex_unlock(&lp.mu);
	for (i = 0; i < nworkers; i++)
		if (ws[i].started)
			pthread_cancel(ws[i].thread);
	for (i = 0; i < nworkers; i++)
		if (ws[i].started)
			pthread_join(ws[i].thread, NULL);
	if (!rc)
		rc = lp.err;
#ifdef TFS_PROFILE_IO
	prof_print();
#endif
	sem_destroy(&lp.finish);
out_bufs:
	for (i = 0; i < nworkers; i++) {
		if (!region)
			free(ws[i].fbuf.mem);
		pthread_cond_destroy(&ws[i].turn_cv);
	}
	free(ws);
	return rc;
}
