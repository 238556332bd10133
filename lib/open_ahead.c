/* open(2) on a helper thread, so that a caller can do something else while the kernel and
 * the daemon answer the FUSE OPEN (25-50 µs); tfs_open maps the tensor's IPC handle in
 * that time (client_open.c). One helper per process, one open at a time: a caller that
 * finds it busy opens the file itself.
 *
 * The helper is a thread of this process, so the open runs with the process's credentials,
 * root and working directory; a caller that changed its own thread's alone
 * (setfsuid(2), unshare(CLONE_FS)) would not get its own, so tfs_open hands only absolute
 * paths here and a caller with per-thread credentials should use tfs_open_fd. After fork
 * the child has no helper (threads do not survive fork): it starts one at its first use. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_internal.h"

enum { IDLE, ASKED, DONE };

static struct {
	pthread_mutex_t slot;        /* held by the caller from start to wait */
	pthread_mutex_t mu;          /* everything below */
	pthread_cond_t asked, done;
	int started;                 /* the helper runs: 1; could not be started: -1 */
	int state;
	const char *path;            /* the caller's, valid until it has waited */
	int flags;
	struct stat *st;             /* the caller's, for fstat of the new descriptor */
	int result;                  /* the descriptor or -errno */
} h = {
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, IDLE, NULL, 0, NULL, 0,
};

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static long served;

static void *helper(void *arg)
{
	int fd;

	(void)arg;
	pthread_mutex_lock(&h.mu);
	for (;;) {
		while (h.state != ASKED)
			pthread_cond_wait(&h.asked, &h.mu);
		pthread_mutex_unlock(&h.mu);
		fd = open(h.path, h.flags);
		/* A GETATTR when the kernel's attributes are stale: here it overlaps the
		 * caller's work too. */
		if (fd >= 0 && h.st && fstat(fd, h.st))
			memset(h.st, 0, sizeof(*h.st));
		pthread_mutex_lock(&h.mu);
		h.result = fd < 0 ? -errno : fd;
		h.state = DONE;
		pthread_cond_signal(&h.done);
	}
	return NULL;
}

/* Forking is done by one thread; whatever the others held here is gone with them. */
static void child_reset(void)
{
	pthread_mutex_init(&h.slot, NULL);
	pthread_mutex_init(&h.mu, NULL);
	pthread_cond_init(&h.asked, NULL);
	pthread_cond_init(&h.done, NULL);
	h.started = 0;
	h.state = IDLE;
}

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, child_reset);
}

/* Under h.slot. Signals are blocked in the helper: they are for the process's own threads. */
static int start_helper(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t tid;
	int rc;

	pthread_once(&atfork_once, register_atfork);
	if (pthread_attr_init(&attr))
		return -1;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* It calls open(2) and waits: a small stack is plenty. */
	pthread_attr_setstacksize(&attr, 64 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&tid, &attr, helper, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc)
		return -1;
	pthread_setname_np(tid, "tfs-open");
	return 1;
}

int tfs_ahead_start(const char *path, int flags, struct stat *st)
{
	if (pthread_mutex_trylock(&h.slot))
		return 0;
	if (h.started == 0)
		h.started = start_helper();
	if (h.started < 0) {
		pthread_mutex_unlock(&h.slot);
		return 0;
	}
	pthread_mutex_lock(&h.mu);
	h.path = path;
	h.flags = flags;
	h.st = st;
	h.state = ASKED;
	pthread_cond_signal(&h.asked);
	pthread_mutex_unlock(&h.mu);
	return 1;
}

int tfs_ahead_wait(void)
{
	int rc;

	pthread_mutex_lock(&h.mu);
	while (h.state != DONE)
		pthread_cond_wait(&h.done, &h.mu);
	rc = h.result;
	h.state = IDLE;
	served++;
	h.path = NULL;
	h.st = NULL;
	pthread_mutex_unlock(&h.mu);
	pthread_mutex_unlock(&h.slot);
	return rc;
}

long tfs_ahead_count(void)
{
	long n;

	pthread_mutex_lock(&h.mu);
	n = served;
	pthread_mutex_unlock(&h.mu);
	return n;
}
