/* The zeroing thread. Memory the pool hands out reads as zeros, because every byte given
 * back to it is zeroed first: a fresh cudaMalloc block and the tail a shrink gives back at
 * once (alloc.c), a freed chunk by the device's zeroing thread, which zeroes what was freed
 * in a batch, waits for it and only then returns it to the pool. So neither alloc nor free
 * waits for a memset. Zeroing at allocation was a memset plus a stream synchronise in every
 * create, and a memset queued at free still cost 8-10 us of driver calls; both ran under
 * the daemon's namespace lock, which a create -> shape -> unlink held 50-65 us in all
 * (H100). An allocation that finds the device full waits for the zeroing thread and tries
 * again; stats() waits for it too, so statfs counts freed memory as free. What this does
 * not cover: a process that keeps writing through its mapping of a tensor after the tensor
 * is freed (a use after free in that program) leaves those bytes for the next tensor of the
 * same owner placed there. */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>

#include "mem/cuda/cuda_internal.h"
#include "log.h"

/* Zeroes c now and gives it back to the pool; memory that cannot be zeroed is not given
 * back (it would be handed out dirty): leaked, and said so. */
static void zero_now_and_free(struct cdev *d, struct tfs_pool_chunk *c)
{
	uint64_t len = tfs_pool_chunk_capacity(c);

	if (tfs_cuda_dev_copy_zero(d, 0, 0, 0, tfs_pool_chunk_addr(c), len) == 0)
		tfs_pool_free(d->pool, c);
	else
		tfs_log(LOG_ERR, "cuda: device %d: cannot zero %" PRIu64 " freed bytes: not "
			"reused", d->ordinal, len);
}

/* Zeroes what was freed, a batch at a time, and returns it to the pool once the memsets
 * are done. Memory that cannot be zeroed is not returned (it would be handed out dirty):
 * leaked, and said so. */
void *tfs_cuda_zero_main(void *arg)
{
	struct cdev *d = arg;
	struct zitem *batch, *z;
	cudaError_t e;

	cudaSetDevice(d->ordinal);
	pthread_mutex_lock(&d->zmu);
	for (;;) {
		while (!d->zhead && !d->zstop)
			pthread_cond_wait(&d->zwork, &d->zmu);
		if (!d->zhead)
			break;
		batch = d->zhead;
		d->zhead = NULL;
		d->zbusy = 1;
		pthread_mutex_unlock(&d->zmu);
		e = cudaSuccess;
		for (z = batch; z && e == cudaSuccess; z = z->next)
			if (z->c)
				e = cudaMemsetAsync((void *)(uintptr_t)tfs_pool_chunk_addr(z->c), 0,
					    tfs_pool_chunk_capacity(z->c), d->zstream);
		if (e == cudaSuccess)
			e = cudaStreamSynchronize(d->zstream);
		else
			(void)cudaStreamSynchronize(d->zstream);
		if (e != cudaSuccess)
			tfs_cuda_fail(e, "zeroing freed memory", d->ordinal);
		while ((z = batch)) {
			batch = z->next;
			/* After a failed batch, one at a time, synchronously. */
			if (z->fn)
				z->fn(d, z->arg);
			else if (e == cudaSuccess)
				tfs_pool_free(d->pool, z->c);
			else
				zero_now_and_free(d, z->c);
			free(z);
		}
		pthread_mutex_lock(&d->zmu);
		d->zbusy = 0;
		pthread_cond_broadcast(&d->zdone);
	}
	pthread_mutex_unlock(&d->zmu);
	return NULL;
}

/* Puts z on d's list for the zeroing thread. */
static void later(struct cdev *d, struct zitem *z)
{
	int wake;

	pthread_mutex_lock(&d->zmu);
	wake = !d->zhead && !d->zbusy;
	z->next = d->zhead;
	d->zhead = z;
	pthread_mutex_unlock(&d->zmu);
	/* A busy thread looks at the list again before it sleeps. */
	if (wake)
		pthread_cond_signal(&d->zwork);
}

/* Gives c back to the pool, zeroed, without waiting for it. */
void tfs_cuda_chunk_release(struct cdev *d, struct tfs_pool_chunk *c)
{
	struct zitem *z = calloc(1, sizeof(*z));

	if (!z) {
		zero_now_and_free(d, c);
		return;
	}
	z->c = c;
	later(d, z);
}

void tfs_cuda_later(struct cdev *d, void (*fn)(struct cdev *d, void *arg), void *arg)
{
	struct zitem *z = calloc(1, sizeof(*z));

	if (!z) {
		fn(d, arg);
		return;
	}
	z->fn = fn;
	z->arg = arg;
	later(d, z);
}

/* Waits until everything freed so far is back in the pool. */
void tfs_cuda_zero_drain(struct cdev *d)
{
	pthread_mutex_lock(&d->zmu);
	while (d->zhead || d->zbusy)
		pthread_cond_wait(&d->zdone, &d->zmu);
	pthread_mutex_unlock(&d->zmu);
}

