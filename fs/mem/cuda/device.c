/* The CUDA backend's devices: each set up on first use (tfs_cuda_dev_get) with its
 * context, pool, staging slots and zeroing thread. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem/cuda/cuda_internal.h"
#include "log.h"

/* ---- staging slots ---- */

struct slot *tfs_cuda_slot_get(struct cdev *d)
{
	struct slot *s;

	pthread_mutex_lock(&d->mu);
	while (!d->nfree)
		pthread_cond_wait(&d->cv, &d->mu);
	s = &d->slots[d->free_slot[--d->nfree]];
	pthread_mutex_unlock(&d->mu);
	return s;
}

void tfs_cuda_slot_put(struct cdev *d, struct slot *s)
{
	pthread_mutex_lock(&d->mu);
	d->free_slot[d->nfree++] = (int)(s - d->slots);
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

/* ---- devices ---- */

/* d's pool: freed blocks kept for reuse, but not so many that the CUDA programs sharing
 * the device starve (1/16 of it, between 256 MiB and 4 GiB); or its --preallocate
 * segments. */
static void pool_config(struct cdev *d, size_t totalb, struct tfs_pool_config *cfg)
{
	tfs_pool_config_default(cfg);
	cfg->cache_max = totalb / 16;
	if (cfg->cache_max < 256 * MiB)
		cfg->cache_max = 256 * MiB;
	if (cfg->cache_max > 4 * GiB)
		cfg->cache_max = 4 * GiB;
	tfs_cuda_prealloc_cfg(d, cfg);
}

int tfs_cuda_dev_repool(struct cdev *d)
{
	struct tfs_pool_config cfg;
	struct tfs_pool_stats st;
	struct tfs_pool *p;

	tfs_pool_get_stats(d->pool, &st);
	if (d->seg || st.nallocs || st.reserved)
		return 0;
	pool_config(d, d->be->dev_total[d->ordinal], &cfg);
	if (!d->seg)
		return 0;
	if (!(p = tfs_pool_new(&cfg, d->be->block_ops, d))) {
		d->seg = 0;
		d->prealloc = 0;
		return -ENOMEM;
	}
	tfs_pool_destroy(d->pool);
	d->pool = p;
	return 0;
}

void tfs_cuda_dev_destroy(struct cdev *d)
{
	struct tfs_pool_stats st;
	int i, k;

	if (!d)
		return;
	cudaSetDevice(d->ordinal);
	if (d->zstarted) {
		pthread_mutex_lock(&d->zmu);
		d->zstop = 1;          /* it empties the list first */
		pthread_cond_signal(&d->zwork);
		pthread_mutex_unlock(&d->zmu);
		pthread_join(d->zthread, NULL);
	}
	if (d->pool) {
		tfs_pool_get_stats(d->pool, &st);
		if (st.nallocs)
			tfs_log(LOG_WARNING, "cuda: device %d: releasing %" PRIu64
				" allocations still live", d->ordinal, st.nallocs);
		tfs_pool_destroy(d->pool);
	}
	for (struct cblock *cb; (cb = tfs_cuda_prealloc_pop(d));)
		d->be->block_ops->put(d, (uint64_t)(uintptr_t)cb->ptr, cb->size, cb);
	tfs_cuda_prealloc_end(d);
	if (d->zstream)
		cudaStreamDestroy(d->zstream);
	pthread_cond_destroy(&d->zdone);
	pthread_cond_destroy(&d->zwork);
	pthread_mutex_destroy(&d->zmu);
	for (i = 0; i < STAGING_SLOTS; i++) {
		for (k = 0; k < RING; k++)
			if (d->slots[i].ev[k])
				cudaEventDestroy(d->slots[i].ev[k]);
		if (d->slots[i].stream)
			cudaStreamDestroy(d->slots[i].stream);
	}
	if (d->staging)
		cudaFreeHost(d->staging);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

/* Called with be->init_mu held and ordinal current. */
static int dev_init(struct tfs_backend *be, int ordinal, struct cdev **out)
{
	struct tfs_pool_config cfg;
	struct cdev *d;
	size_t freeb = 0, totalb = 0;
	cudaError_t e;
	int rc, i, k;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->ordinal = ordinal;
	d->be = be;
	atomic_init(&d->reserved, 0);
	if (pthread_mutex_init(&d->mu, NULL)) {
		free(d);
		return -ENOMEM;
	}
	if (pthread_cond_init(&d->cv, NULL)) {
		pthread_mutex_destroy(&d->mu);
		free(d);
		return -ENOMEM;
	}
	pthread_mutex_init(&d->zmu, NULL);
	pthread_cond_init(&d->zwork, NULL);
	pthread_cond_init(&d->zdone, NULL);
	/* The first call on a device creates its context: errors here mean no usable GPU. */
	e = cudaMemGetInfo(&freeb, &totalb);
	if (e != cudaSuccess) {
		rc = tfs_cuda_fail(e, "cudaMemGetInfo", ordinal);
		goto fail;
	}
	e = cudaHostAlloc((void **)&d->staging, STAGING_SLOTS * SLOT_BYTES, cudaHostAllocDefault);
	if (e != cudaSuccess) {
		d->staging = NULL;
		rc = tfs_cuda_fail(e, "cudaHostAlloc of the staging buffers", ordinal);
		goto fail;
	}
	for (i = 0; i < STAGING_SLOTS; i++) {
		struct slot *s = &d->slots[i];

		s->buf = d->staging + (size_t)i * SLOT_BYTES;
		/* Non-blocking: no implicit ordering with the legacy default stream. */
		e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking);
		for (k = 0; e == cudaSuccess && k < RING; k++)
			e = cudaEventCreateWithFlags(&s->ev[k], cudaEventDisableTiming);
		if (e != cudaSuccess) {
			rc = tfs_cuda_fail(e, "creating streams and events", ordinal);
			goto fail;
		}
		d->free_slot[d->nfree++] = i;
	}
	e = cudaStreamCreateWithFlags(&d->zstream, cudaStreamNonBlocking);
	if (e != cudaSuccess) {
		rc = tfs_cuda_fail(e, "creating the zeroing stream", ordinal);
		goto fail;
	}
	pool_config(d, totalb, &cfg);
	d->pool = tfs_pool_new(&cfg, be->block_ops, d);
	if (!d->pool) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = -pthread_create(&d->zthread, NULL, be->zero_main, d);
	if (rc)
		goto fail;
	pthread_setname_np(d->zthread, "tfs-cuda-zero");
	d->zstarted = 1;
	tfs_log(LOG_INFO, "cuda: device %d: %zu MiB total, %zu MiB free, staging %d x %zu MiB",
		ordinal, totalb / (size_t)MiB, freeb / (size_t)MiB, STAGING_SLOTS,
		SLOT_BYTES / (size_t)MiB);
	tfs_cuda_vmm_report(ordinal);
	*out = d;
	return 0;
fail:
	tfs_cuda_dev_destroy(d);
	return rc;
}

/* The device for ordinal (negative: the default), set up on first use and made current on
 * the calling thread (CUDA's current device is per thread, and FUSE calls come from many). */
int tfs_cuda_dev_get(struct tfs_backend *be, int ordinal, struct cdev **out)
{
	struct cdev *d;
	cudaError_t e;
	int rc = 0;

	if (ordinal < 0)
		ordinal = be->default_dev;
	if (ordinal >= be->ndev)
		return -EINVAL;
	e = cudaSetDevice(ordinal);
	if (e != cudaSuccess)
		return tfs_cuda_fail(e, "cudaSetDevice", ordinal);
	d = atomic_load_explicit(&be->devs[ordinal], memory_order_acquire);
	if (!d) {
		pthread_mutex_lock(&be->init_mu);
		d = atomic_load_explicit(&be->devs[ordinal], memory_order_acquire);
		if (!d) {
			rc = dev_init(be, ordinal, &d);
			if (rc == 0)
				atomic_store_explicit(&be->devs[ordinal], d, memory_order_release);
		}
		pthread_mutex_unlock(&be->init_mu);
	}
	*out = d;
	return rc;
}

int tfs_cuda_dev_current(struct cdev *d)
{
	cudaError_t e = cudaSetDevice(d->ordinal);

	return e == cudaSuccess ? 0 : tfs_cuda_fail(e, "cudaSetDevice", d->ordinal);
}

uint64_t tfs_cuda_cap(const struct tfs_backend *be, int ordinal)
{
	if (ordinal < 0 || ordinal >= TFS_DEVICES_MAX)
		return be->cap;
	if (be->caps.devmask >> ordinal & 1)
		return be->caps.dev[ordinal];
	if (!be->cap && (be->prealloc.devmask >> ordinal & 1))
		return be->prealloc.dev[ordinal];
	return be->cap;
}
