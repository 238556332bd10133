/* ESTALE once, then ENOENT: see stale.h. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "fuse/stale.h"
#include "util/clock.h"

/* Threads with an ESTALE outstanding. A thread that collides with another in its slot
 * pushes it out, and that one's retry gets ESTALE again: rare, and never worse than
 * before. */
#define SLOTS 64

/* How long an ESTALE waits for its retry. The VFS retries at once, but a loaded machine
 * may run other threads in between; a later call of the same thread is a new call. */
#define RETRY_NS 1000000000LL

static struct {
	pthread_mutex_t mu;
	int pending;                 /* slots in use; read without mu as a hint */
	struct {
		pid_t tid;           /* 0: free */
		int64_t at;          /* CLOCK_MONOTONIC ns of the ESTALE */
	} slot[SLOTS];
} st = { .mu = PTHREAD_MUTEX_INITIALIZER };

int tfs_stale_answer(pid_t tid)
{
	unsigned int i = (unsigned int)tid % SLOTS;
	int64_t now = tfs_mono_ns();
	int rc;

	if (tid <= 0)
		return -ESTALE;      /* the kernel's own request: no thread to retry */
	pthread_mutex_lock(&st.mu);
	if (st.slot[i].tid == tid && now - st.slot[i].at < RETRY_NS) {
		st.slot[i].tid = 0;
		__atomic_store_n(&st.pending, st.pending - 1, __ATOMIC_RELAXED);
		rc = -ENOENT;
	} else {
		if (!st.slot[i].tid)
			__atomic_store_n(&st.pending, st.pending + 1, __ATOMIC_RELAXED);
		st.slot[i].tid = tid;
		st.slot[i].at = now;
		rc = -ESTALE;
	}
	pthread_mutex_unlock(&st.mu);
	return rc;
}

void tfs_stale_done(pid_t tid)
{
	unsigned int i = (unsigned int)tid % SLOTS;

	if (tid <= 0 || !__atomic_load_n(&st.pending, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&st.mu);
	if (st.slot[i].tid == tid) {
		st.slot[i].tid = 0;
		__atomic_store_n(&st.pending, st.pending - 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&st.mu);
}
