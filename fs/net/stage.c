/* Staging threads (stage.h). Two: one item's copy out of device memory overlaps another's,
 * and both the network thread's sends. Their queues are bounded by the caller, which
 * holds the bytes of each item it puts against its own bound (serve.c's held). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>

#include "net/stage.h"
#include "util/guard.h"

#define THREADS 2

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct tfs_net_stage *todo, **todo_tail;
	struct tfs_net_stage *done[TFS_NET_STAGE_LANES], **done_tail[TFS_NET_STAGE_LANES];
	int64_t (*work)(void *arg);
	void (*wake)(int lane);
	pthread_t th[THREADS];
	int nth;
	int stop;
} st = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void *stager(void *arg)
{
	(void)arg;
	/* Copies out of a host tensor's mapping are guarded (the host tier's copy_out). */
	tfs_guard_thread();
	pthread_mutex_lock(&st.mu);
	for (;;) {
		struct tfs_net_stage *it;
		int lane;

		while (!st.todo && !st.stop)
			pthread_cond_wait(&st.cv, &st.mu);
		if (st.stop)
			break;
		it = st.todo;
		st.todo = it->next;
		if (!st.todo)
			st.todo_tail = &st.todo;
		pthread_mutex_unlock(&st.mu);
		it->result = st.work(it->arg);
		pthread_mutex_lock(&st.mu);
		it->next = NULL;
		*st.done_tail[it->lane] = it;
		st.done_tail[it->lane] = &it->next;
		lane = it->lane;
		pthread_mutex_unlock(&st.mu);
		st.wake(lane);
		pthread_mutex_lock(&st.mu);
	}
	pthread_mutex_unlock(&st.mu);
	return NULL;
}

int tfs_net_stage_start(int64_t (*work)(void *arg), void (*wake)(int lane))
{
	sigset_t all, old;
	int rc = 0;

	st.work = work;
	st.wake = wake;
	st.todo_tail = &st.todo;
	for (int i = 0; i < TFS_NET_STAGE_LANES; i++)
		st.done_tail[i] = &st.done[i];
	st.stop = 0;
	/* As every thread of the daemon's: signals are the main thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (st.nth = 0; st.nth < THREADS; st.nth++)
		if ((rc = pthread_create(&st.th[st.nth], NULL, stager, NULL)))
			break;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (st.nth == 0)
		return -rc;
	return 0;
}

static void drain(struct tfs_net_stage *it, void (*drop)(struct tfs_net_stage *))
{
	while (it) {
		struct tfs_net_stage *next = it->next;

		drop(it);
		it = next;
	}
}

void tfs_net_stage_stop(void (*drop)(struct tfs_net_stage *))
{
	pthread_mutex_lock(&st.mu);
	st.stop = 1;
	pthread_cond_broadcast(&st.cv);
	pthread_mutex_unlock(&st.mu);
	for (int i = 0; i < st.nth; i++)
		pthread_join(st.th[i], NULL);
	st.nth = 0;
	drain(st.todo, drop);
	st.todo = NULL;
	st.todo_tail = &st.todo;
	for (int i = 0; i < TFS_NET_STAGE_LANES; i++) {
		drain(st.done[i], drop);
		st.done[i] = NULL;
		st.done_tail[i] = &st.done[i];
	}
}

int tfs_net_stage_put(struct tfs_net_stage *it)
{
	int rc = 0;

	if (it->lane < 0 || it->lane >= TFS_NET_STAGE_LANES)
		return -EINVAL;
	pthread_mutex_lock(&st.mu);
	if (!st.nth || st.stop) {
		rc = -EAGAIN;
	} else {
		it->next = NULL;
		*st.todo_tail = it;
		st.todo_tail = &it->next;
		pthread_cond_signal(&st.cv);
	}
	pthread_mutex_unlock(&st.mu);
	return rc;
}

struct tfs_net_stage *tfs_net_stage_take(int lane)
{
	struct tfs_net_stage *it;

	pthread_mutex_lock(&st.mu);
	it = st.done[lane];
	st.done[lane] = NULL;
	st.done_tail[lane] = &st.done[lane];
	pthread_mutex_unlock(&st.mu);
	return it;
}
