/* The CUDA backend: tensors live in device memory obtained with cudaMalloc and carved up by
 * fs/pool.c; other processes map them with CUDA IPC handles; read/write copy through
 * pinned staging buffers.
 *
 * Per device used (set up on first use; the default device in init()):
 *  - one pool of blocks. Pool keys say who may share a block: an IPC handle maps its whole
 *    cudaMalloc block, so tensors share a block only when exactly the same users can read
 *    them (same owner uid; the group too when group-readable; "everyone" when
 *    other-readable). A handle read by one user then exposes nothing that user could not
 *    read through the files anyway.
 *  - STAGING_SLOTS slots, each a pinned buffer of SLOT_BYTES (one cudaHostAlloc for all:
 *    pinning costs ~50 ms per 64 MiB, so it is done once) and its own stream. A copy takes
 *    a free slot (waiting on a condition variable when all are busy), moves the data in
 *    pieces through a ring of RING sub-buffers so that the CPU copy of one piece overlaps
 *    the DMA of the previous, and synchronises its stream before it returns the slot.
 *
 * Zero-filling: memory the pool hands out reads as zeros, because every byte given back to
 * it is zeroed first: a fresh cudaMalloc block and the tail a shrink gives back at once, a
 * freed chunk by the device's zeroing thread, which zeroes what was freed in a batch, waits
 * for it and only then returns it to the pool. So neither alloc nor free waits for a
 * memset. Zeroing at allocation was a memset plus a stream synchronise in every create,
 * and a memset queued at free still cost 8-10 us of driver calls; both ran under the
 * daemon's namespace lock, which a create -> shape -> unlink held 50-65 us in all (H100).
 * An allocation that finds the device full waits for the zeroing thread and tries again;
 * stats() waits for it too, so statfs counts freed memory as free. What this does not
 * cover: a process that keeps writing through its mapping of a tensor after the tensor is
 * freed (a use after free in that program) leaves those bytes for the next tensor of the
 * same owner placed there.
 *
 * Ownership changes (set_owner): a tensor alone in its block keeps its memory and the block
 * is retired (nothing else will be placed in it: holders of the old owner's handle may still
 * map it, as an open file descriptor survives chown on any filesystem). A tensor that shares
 * its block moves to a block of the new key (alloc, device copy, free): its handle and
 * offset change, so the caller must call export_handle again after set_owner.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "backend.h"
#include "log.h"
#include "pool.h"

#define KiB ((uint64_t)1024)
#define MiB (KiB * 1024)
#define GiB (MiB * 1024)

#define STAGING_SLOTS 8                         /* concurrent copies per device */
#define RING 4                                  /* pieces in flight per copy */
#define PIECE_MAX (2 * MiB)
/* Requests up to PIECE_MIN go in one piece; a 1 MiB FUSE request in two. Each piece costs
 * a few microseconds of CUDA calls, and the CPU copy (about 7 GB/s for one thread on the
 * H100 test machine) dominates: measured there with 1 MiB calls, 1 and 8 threads, GB/s in
 * and out, 128 KiB: 6.2/6.6, 19/21; 256 KiB: 5.8/5.5, 14/16; 512 KiB: 6.4/6.0, 23/23;
 * 1 MiB: 5.9/5.5, 25/21 (one sample each, host memory bandwidth varied by 30% between
 * runs). Overridable for such measurements. */
#ifndef TFS_CUDA_PIECE_MIN
#define TFS_CUDA_PIECE_MIN (512 * KiB)
#endif
#define PIECE_MIN ((uint64_t)TFS_CUDA_PIECE_MIN)
#define SLOT_BYTES ((size_t)(RING * PIECE_MAX)) /* 8 MiB: 64 MiB pinned per device */

_Static_assert(sizeof(cudaIpcMemHandle_t) == TFS_IPC_HANDLE_SIZE, "IPC handle size");
_Static_assert(sizeof(cudaIpcEventHandle_t) == TFS_IPC_HANDLE_SIZE, "IPC event handle size");
#define MARKS_MAX 64

struct slot {
	uint8_t *buf;
	cudaStream_t stream;
	cudaEvent_t ev[RING];
};

struct cdev {
	int ordinal;
	struct tfs_backend *be;
	struct tfs_pool *pool;
	uint8_t *staging;
	struct slot slots[STAGING_SLOTS];
	int free_slot[STAGING_SLOTS];
	int nfree;
	pthread_mutex_t mu;     /* the free slots and the blocks' handle caches */
	pthread_cond_t cv;
	/* Chunks freed, waiting to be zeroed and given back to the pool (zthread). */
	struct zitem *zhead;
	int zbusy, zstop, zstarted;
	pthread_mutex_t zmu;
	pthread_cond_t zwork, zdone;
	pthread_t zthread;
	cudaStream_t zstream;
};

struct zitem {
	struct zitem *next;
	struct tfs_pool_chunk *c;
};

/* The pool's per-block cookie. */
struct cblock {
	void *ptr;
	int have_handle;
	cudaIpcMemHandle_t handle;
};

struct tfs_alloc {
	struct cdev *dev;
	struct tfs_pool_chunk *chunk;
	struct tfs_pool_key key;
};

/* An interprocess event a producer marked a tensor written with, opened here once and
 * kept for the following reads (opening costs a driver call; waiting on a completed event
 * costs nothing). */
struct mark {
	cudaIpcEventHandle_t handle;
	cudaEvent_t ev;
	int device, users;
	uint64_t used;               /* last use, for eviction */
};

struct tfs_backend {
	pthread_mutex_t marks_mu;
	struct mark marks[MARKS_MAX];
	int nmarks;
	uint64_t mark_clock;
	int ndev, default_dev;
	uint64_t cap;                           /* 0: the devices' memory is the limit */
	uint64_t total;                         /* memory of all devices */
	_Atomic uint64_t reserved;              /* cudaMalloc'ed bytes, all devices */
	pthread_mutex_t init_mu;
	_Atomic(struct cdev *) *devs;
	uint8_t *io;                            /* io_region(): pinned, portable */
	size_t io_bytes;
	pthread_mutex_t areas_mu;
	struct rarea *areas;                    /* read_fd()'s, one per thread that read */
	unsigned gen;                           /* tells this backend's areas (my_gen) */
};

static int cuda_errno(cudaError_t e)
{
	switch (e) {
	case cudaSuccess:
		return 0;
	case cudaErrorMemoryAllocation:
		return -ENOMEM;
	case cudaErrorInvalidDevice:
	case cudaErrorNoDevice:
		return -EINVAL;
	default:
		return -EIO;
	}
}

/* Log a failed call and turn it into a negative errno. Clears the error if it was not
 * sticky, so the next call on this thread does not report it again. */
static int cuda_fail(cudaError_t e, const char *what, int device)
{
	tfs_log(LOG_ERR, "cuda: device %d: %s: %s (%s)", device, what, cudaGetErrorString(e),
		cudaGetErrorName(e));
	(void)cudaGetLastError();
	return cuda_errno(e);
}

/* ---- zero-fills of memory given back to the pool ---- */

static int dev_copy_zero(struct cdev *d, uint64_t dst, uint64_t src, uint64_t copy_len,
			 uint64_t zero_at, uint64_t zero_len);

/* Zeroes c now and gives it back to the pool; memory that cannot be zeroed is not given
 * back (it would be handed out dirty): leaked, and said so. */
static void zero_now_and_free(struct cdev *d, struct tfs_pool_chunk *c)
{
	uint64_t len = tfs_pool_chunk_capacity(c);

	if (dev_copy_zero(d, 0, 0, 0, tfs_pool_chunk_addr(c), len) == 0)
		tfs_pool_free(d->pool, c);
	else
		tfs_log(LOG_ERR, "cuda: device %d: cannot zero %" PRIu64 " freed bytes: not "
			"reused", d->ordinal, len);
}

/* Zeroes what was freed, a batch at a time, and returns it to the pool once the memsets
 * are done. Memory that cannot be zeroed is not returned (it would be handed out dirty):
 * leaked, and said so. */
static void *zero_main(void *arg)
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
			e = cudaMemsetAsync((void *)(uintptr_t)tfs_pool_chunk_addr(z->c), 0,
					    tfs_pool_chunk_capacity(z->c), d->zstream);
		if (e == cudaSuccess)
			e = cudaStreamSynchronize(d->zstream);
		else
			(void)cudaStreamSynchronize(d->zstream);
		if (e != cudaSuccess)
			cuda_fail(e, "zeroing freed memory", d->ordinal);
		while ((z = batch)) {
			batch = z->next;
			/* After a failed batch, one at a time, synchronously. */
			if (e == cudaSuccess)
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

/* Gives c back to the pool, zeroed, without waiting for it. */
static void chunk_release(struct cdev *d, struct tfs_pool_chunk *c)
{
	struct zitem *z = malloc(sizeof(*z));
	int wake;

	if (!z) {
		zero_now_and_free(d, c);
		return;
	}
	z->c = c;
	pthread_mutex_lock(&d->zmu);
	wake = !d->zhead && !d->zbusy;
	z->next = d->zhead;
	d->zhead = z;
	pthread_mutex_unlock(&d->zmu);
	/* A busy thread looks at the list again before it sleeps. */
	if (wake)
		pthread_cond_signal(&d->zwork);
}

/* Waits until everything freed so far is back in the pool. */
static void zero_drain(struct cdev *d)
{
	pthread_mutex_lock(&d->zmu);
	while (d->zhead || d->zbusy)
		pthread_cond_wait(&d->zdone, &d->zmu);
	pthread_mutex_unlock(&d->zmu);
}

/* tfs_pool_alloc, trying once more when the device is full: memory freed may still be on
 * its way back through the zeroing thread. */
static int pool_alloc(struct cdev *d, struct tfs_pool_key key, uint64_t bytes,
		      struct tfs_pool_chunk **out)
{
	int rc = tfs_pool_alloc(d->pool, key, bytes, 0, out);

	if (rc == -ENOSPC) {
		zero_drain(d);
		rc = tfs_pool_alloc(d->pool, key, bytes, 0, out);
	}
	return rc;
}

/* ---- pool callbacks: run under the pool's lock, on a thread whose current device is the
 * pool's ---- */

static int block_get(void *ctx, uint64_t size, uint64_t *base, void **cookie)
{
	struct cdev *d = ctx;
	struct tfs_backend *be = d->be;
	struct cblock *cb;
	uint64_t before;
	cudaError_t e;

	before = atomic_fetch_add(&be->reserved, size);
	if (be->cap && before + size > be->cap) {
		atomic_fetch_sub(&be->reserved, size);
		return -ENOSPC;
	}
	cb = calloc(1, sizeof(*cb));
	if (!cb) {
		atomic_fetch_sub(&be->reserved, size);
		return -ENOMEM;
	}
	e = cudaMalloc(&cb->ptr, size);
	if (e != cudaSuccess) {
		/* Expected when the device is full: the pool trims its cache and retries, and
		 * the caller reports ENOSPC, so no error here. */
		tfs_log(LOG_DEBUG, "cuda: device %d: cudaMalloc(%" PRIu64 "): %s", d->ordinal,
			size, cudaGetErrorString(e));
		(void)cudaGetLastError();
		atomic_fetch_sub(&be->reserved, size);
		free(cb);
		return e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO;
	}
	/* cudaMalloc makes no promise about what the memory holds. */
	if (dev_copy_zero(d, 0, 0, 0, (uint64_t)(uintptr_t)cb->ptr, size) < 0) {
		cudaFree(cb->ptr);
		atomic_fetch_sub(&be->reserved, size);
		free(cb);
		return -EIO;
	}
	*base = (uint64_t)(uintptr_t)cb->ptr;
	*cookie = cb;
	return 0;
}

static void block_put(void *ctx, uint64_t base, uint64_t size, void *cookie)
{
	struct cdev *d = ctx;
	struct cblock *cb = cookie;
	cudaError_t e;

	(void)base;
	e = cudaFree(cb->ptr);
	if (e != cudaSuccess)
		cuda_fail(e, "cudaFree", d->ordinal);
	atomic_fetch_sub(&d->be->reserved, size);
	free(cb);
}

static const struct tfs_pool_block_ops block_ops = { block_get, block_put };

/* Where read_fd() puts a read for the FUSE reply to splice from: a thread's own memfd,
 * mapped and pinned. The thread's next read_fd() reuses it, by which time the reply that
 * spliced from it has been copied into the reader's buffer. */
#define RAREA_BYTES ((size_t)1 << 20)   /* max_read */
struct rarea {
	struct rarea *next;
	int fd;
	void *p;
};
/* A thread may outlive a backend (tests init and fini several): its area is valid only
 * while my_gen is the backend's generation. */
static __thread struct rarea *my_area;
static __thread unsigned my_gen, my_failed_gen;
static _Atomic unsigned be_gens;

/* ---- staging slots ---- */

static struct slot *slot_get(struct cdev *d)
{
	struct slot *s;

	pthread_mutex_lock(&d->mu);
	while (!d->nfree)
		pthread_cond_wait(&d->cv, &d->mu);
	s = &d->slots[d->free_slot[--d->nfree]];
	pthread_mutex_unlock(&d->mu);
	return s;
}

static void slot_put(struct cdev *d, struct slot *s)
{
	pthread_mutex_lock(&d->mu);
	d->free_slot[d->nfree++] = (int)(s - d->slots);
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

/* ---- devices ---- */

static void dev_destroy(struct cdev *d)
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
		rc = cuda_fail(e, "cudaMemGetInfo", ordinal);
		goto fail;
	}
	e = cudaHostAlloc((void **)&d->staging, STAGING_SLOTS * SLOT_BYTES, cudaHostAllocDefault);
	if (e != cudaSuccess) {
		d->staging = NULL;
		rc = cuda_fail(e, "cudaHostAlloc of the staging buffers", ordinal);
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
			rc = cuda_fail(e, "creating streams and events", ordinal);
			goto fail;
		}
		d->free_slot[d->nfree++] = i;
	}
	e = cudaStreamCreateWithFlags(&d->zstream, cudaStreamNonBlocking);
	if (e != cudaSuccess) {
		rc = cuda_fail(e, "creating the zeroing stream", ordinal);
		goto fail;
	}
	/* Keep freed blocks for reuse, but not so many that the CUDA programs sharing this
	 * device starve: 1/16 of the device, between 256 MiB and 4 GiB. */
	tfs_pool_config_default(&cfg);
	cfg.cache_max = totalb / 16;
	if (cfg.cache_max < 256 * MiB)
		cfg.cache_max = 256 * MiB;
	if (cfg.cache_max > 4 * GiB)
		cfg.cache_max = 4 * GiB;
	d->pool = tfs_pool_new(&cfg, &block_ops, d);
	if (!d->pool) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = -pthread_create(&d->zthread, NULL, zero_main, d);
	if (rc)
		goto fail;
	pthread_setname_np(d->zthread, "tfs-cuda-zero");
	d->zstarted = 1;
	tfs_log(LOG_INFO, "cuda: device %d: %zu MiB total, %zu MiB free, staging %d x %zu MiB",
		ordinal, totalb / (size_t)MiB, freeb / (size_t)MiB, STAGING_SLOTS,
		SLOT_BYTES / (size_t)MiB);
	*out = d;
	return 0;
fail:
	dev_destroy(d);
	return rc;
}

/* The device for ordinal (negative: the default), set up on first use and made current on
 * the calling thread (CUDA's current device is per thread, and FUSE calls come from many). */
static int dev_get(struct tfs_backend *be, int ordinal, struct cdev **out)
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
		return cuda_fail(e, "cudaSetDevice", ordinal);
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

static int dev_current(struct cdev *d)
{
	cudaError_t e = cudaSetDevice(d->ordinal);

	return e == cudaSuccess ? 0 : cuda_fail(e, "cudaSetDevice", d->ordinal);
}

/* On the device: copy copy_len bytes from src to dst, then zero zero_len bytes at zero_at.
 * Returns once done. */
static int dev_copy_zero(struct cdev *d, uint64_t dst, uint64_t src, uint64_t copy_len,
			 uint64_t zero_at, uint64_t zero_len)
{
	struct slot *s = slot_get(d);
	cudaError_t e = cudaSuccess, e2;

	if (copy_len)
		e = cudaMemcpyAsync((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, copy_len,
				    cudaMemcpyDeviceToDevice, s->stream);
	if (e == cudaSuccess && zero_len)
		e = cudaMemsetAsync((void *)(uintptr_t)zero_at, 0, zero_len, s->stream);
	e2 = cudaStreamSynchronize(s->stream);
	slot_put(d, s);
	if (e == cudaSuccess)
		e = e2;
	return e == cudaSuccess ? 0 : cuda_fail(e, "device copy/zero-fill", d->ordinal);
}

/* Who may share a block with this tensor: its readers (see the top of the file). */
static struct tfs_pool_key owner_key(uid_t uid, gid_t gid, mode_t mode)
{
	struct tfs_pool_key k;

	k.a = uid;
	if (mode & S_IROTH)
		k.b = 1ull << 33;               /* everyone */
	else if (mode & S_IRGRP)
		k.b = gid;                      /* owner and group gid */
	else
		k.b = 1ull << 32;               /* the owner alone */
	return k;
}

/* ---- operations ---- */

static int cu_init(struct tfs_backend **out, int device, uint64_t max_bytes)
{
	struct tfs_backend *be;
	struct cdev *d;
	cudaError_t e;
	int n = 0, i, rc;

	e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n <= 0) {
		if (e != cudaSuccess)
			cuda_fail(e, "cudaGetDeviceCount", device);
		else
			tfs_log(LOG_ERR, "cuda: no device");
		return -ENODEV;
	}
	if (device < 0 || device >= n) {
		tfs_log(LOG_ERR, "cuda: no device %d (%d present)", device, n);
		return -EINVAL;
	}
	be = calloc(1, sizeof(*be));
	if (!be)
		return -ENOMEM;
	be->devs = calloc((size_t)n, sizeof(*be->devs));
	if (!be->devs || pthread_mutex_init(&be->init_mu, NULL)) {
		free(be->devs);
		free(be);
		return -ENOMEM;
	}
	pthread_mutex_init(&be->marks_mu, NULL);     /* default attributes: cannot fail */
	pthread_mutex_init(&be->areas_mu, NULL);
	be->gen = atomic_fetch_add(&be_gens, 1) + 1;
	be->ndev = n;
	be->default_dev = device;
	be->cap = max_bytes;
	atomic_init(&be->reserved, 0);
	for (i = 0; i < n; i++) {
		struct cudaDeviceProp prop;

		atomic_init(&be->devs[i], NULL);
		if (cudaGetDeviceProperties(&prop, i) == cudaSuccess)
			be->total += prop.totalGlobalMem;
		else
			(void)cudaGetLastError();
	}
	rc = dev_get(be, device, &d);
	if (rc < 0) {
		pthread_mutex_destroy(&be->areas_mu);
		pthread_mutex_destroy(&be->marks_mu);
		pthread_mutex_destroy(&be->init_mu);
		free(be->devs);
		free(be);
		return rc;
	}
	if (max_bytes)
		tfs_log(LOG_INFO, "cuda: capped at %" PRIu64 " MiB", max_bytes / MiB);
	*out = be;
	return 0;
}

static void cu_fini(struct tfs_backend *be)
{
	int i;

	if (!be)
		return;
	for (i = 0; i < be->nmarks; i++) {
		cudaSetDevice(be->marks[i].device);
		cudaEventDestroy(be->marks[i].ev);
	}
	while (be->areas) {
		struct rarea *r = be->areas;

		be->areas = r->next;
		cudaHostUnregister(r->p);
		munmap(r->p, RAREA_BYTES);
		close(r->fd);
		free(r);
	}
	for (i = 0; i < be->ndev; i++)
		dev_destroy(atomic_load(&be->devs[i]));
	if (be->io)
		cudaFreeHost(be->io);
	pthread_mutex_destroy(&be->areas_mu);
	pthread_mutex_destroy(&be->marks_mu);
	pthread_mutex_destroy(&be->init_mu);
	free(be->devs);
	free(be);
}

/* Portable: pinned for every device's context, since a worker's next write may go to any
 * device. Pinning costs about 50 ms per 64 MiB on the test machine; done once. */
static void *cu_io_region(struct tfs_backend *be, size_t bytes)
{
	cudaError_t e;
	void *p = NULL;

	if (be->io)
		return NULL;
	e = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
	if (e != cudaSuccess) {
		cuda_fail(e, "cudaHostAlloc of the request buffers", be->default_dev);
		return NULL;
	}
	be->io = p;
	be->io_bytes = bytes;
	tfs_log(LOG_INFO, "cuda: %zu MiB of pinned request buffers", bytes >> 20);
	return p;
}

static int cu_device_count(struct tfs_backend *be)
{
	return be->ndev;
}

static int cu_alloc(struct tfs_backend *be, int device, uint64_t bytes, uid_t uid, gid_t gid,
		    mode_t mode, struct tfs_alloc **out)
{
	struct tfs_alloc *a;
	struct cdev *d;
	int rc;

	if (!bytes || !out)
		return -EINVAL;
	rc = dev_get(be, device, &d);
	if (rc < 0)
		return rc;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->dev = d;
	a->key = owner_key(uid, gid, mode);
	rc = pool_alloc(d, a->key, bytes, &a->chunk);
	if (rc < 0) {
		tfs_log(rc == -ENOSPC ? LOG_INFO : LOG_ERR, "cuda: device %d: allocating %" PRIu64
			" bytes: %s", d->ordinal, bytes, strerror(-rc));
		goto fail;
	}
	*out = a;
	return 0;
fail:
	free(a);
	return rc;
}

static void cu_free(struct tfs_backend *be, struct tfs_alloc *a)
{
	(void)be;
	if (!a)
		return;
	/* cudaFree, when the pool releases a block, acts on the current device. */
	if (dev_current(a->dev) == 0)
		chunk_release(a->dev, a->chunk);
	else
		tfs_log(LOG_ERR, "cuda: device %d: leaking an allocation", a->dev->ordinal);
	free(a);
}

static int cu_resize(struct tfs_backend *be, struct tfs_alloc **ap, uint64_t new_bytes)
{
	struct tfs_alloc *a = ap ? *ap : NULL;
	struct tfs_pool_chunk *moved, *back;
	struct cdev *d;
	uint64_t old, addr;
	int rc;

	(void)be;
	if (!a || !new_bytes)
		return -EINVAL;
	d = a->dev;
	old = tfs_pool_chunk_bytes(a->chunk);
	if (new_bytes == old)
		return 0;
	rc = dev_current(d);
	if (rc < 0)
		return rc;
	/* In place when it shrinks or the space behind it is free; otherwise into a new chunk
	 * with room to spare (see tfs_pool_growth_room): a file written by appends grows
	 * 1.25x per move, so its bytes are copied a bounded number of times, at the price of
	 * up to 25% unused room behind the last move (free for this tensor's next growth). */
	addr = tfs_pool_chunk_addr(a->chunk);
	/* A shrink may give its tail back to the pool, which hands out only zeroed memory. */
	if (new_bytes < old) {
		uint64_t cap = tfs_pool_chunk_capacity(a->chunk);

		rc = dev_copy_zero(d, 0, 0, 0, addr + new_bytes, cap - new_bytes);
		if (rc < 0)
			return rc;
	}
	rc = tfs_pool_resize(d->pool, a->chunk, new_bytes, &moved);
	if (rc == -ENOSPC) {
		zero_drain(d);     /* as pool_alloc */
		rc = tfs_pool_resize(d->pool, a->chunk, new_bytes, &moved);
	}
	if (rc < 0) {
		tfs_log(rc == -ENOSPC ? LOG_INFO : LOG_ERR, "cuda: device %d: resizing %" PRIu64
			" to %" PRIu64 " bytes: %s", d->ordinal, old, new_bytes, strerror(-rc));
		return rc;
	}
	if (new_bytes < old)
		return 0;
	if (!moved) {
		/* Free memory and a shrink's tail are zero already, but the handle maps the whole
		 * block: a consumer may have written past the tensor's end into its capacity. */
		rc = dev_copy_zero(d, 0, 0, 0, addr + old, new_bytes - old);
		if (rc < 0 && tfs_pool_resize(d->pool, a->chunk, old, &back) == 0 && back)
			chunk_release(d, back);   /* shrinking never moves; be safe */
		return rc;
	}
	addr = tfs_pool_chunk_addr(moved);
	rc = dev_copy_zero(d, addr, tfs_pool_chunk_addr(a->chunk), old, 0, 0);
	if (rc < 0) {
		chunk_release(d, moved);
		return rc;
	}
	/* *ap keeps pointing at a; its memory, handle and offset are new. */
	chunk_release(d, a->chunk);
	a->chunk = moved;
	return 0;
}

static int cu_export_handle(struct tfs_backend *be, struct tfs_alloc *a,
			    uint8_t handle[TFS_IPC_HANDLE_SIZE], uint64_t *offset)
{
	struct cdev *d;
	struct cblock *cb;
	cudaError_t e = cudaSuccess;
	int rc;

	(void)be;
	if (!a || !handle || !offset)
		return -EINVAL;
	d = a->dev;
	rc = dev_current(d);
	if (rc < 0)
		return rc;
	cb = tfs_pool_chunk_cookie(a->chunk);
	pthread_mutex_lock(&d->mu);
	/* Asked once per block: every tensor of the block shares its handle. */
	if (!cb->have_handle) {
		e = cudaIpcGetMemHandle(&cb->handle, cb->ptr);
		cb->have_handle = e == cudaSuccess;
	}
	if (e == cudaSuccess)
		memcpy(handle, &cb->handle, TFS_IPC_HANDLE_SIZE);
	pthread_mutex_unlock(&d->mu);
	if (e != cudaSuccess)
		return cuda_fail(e, "cudaIpcGetMemHandle", d->ordinal);
	*offset = tfs_pool_chunk_offset(a->chunk);
	return 0;
}

static int cu_set_owner(struct tfs_backend *be, struct tfs_alloc *a, uid_t uid, gid_t gid,
			mode_t mode)
{
	struct tfs_pool_key key = owner_key(uid, gid, mode);
	struct tfs_pool_chunk *nc;
	struct cdev *d;
	uint64_t bytes;
	int rc;

	(void)be;
	if (!a)
		return -EINVAL;
	d = a->dev;
	rc = tfs_pool_rekey(d->pool, a->chunk, key);
	if (rc != -EBUSY) {
		if (rc == 0)
			a->key = key;
		return rc;
	}
	/* The block holds tensors of the old readers: move out of it. */
	rc = dev_current(d);
	if (rc < 0)
		return rc;
	bytes = tfs_pool_chunk_bytes(a->chunk);
	rc = pool_alloc(d, key, bytes, &nc);
	if (rc < 0) {
		tfs_log(LOG_INFO, "cuda: device %d: moving %" PRIu64 " bytes to a new owner: %s",
			d->ordinal, bytes, strerror(-rc));
		return rc;
	}
	rc = dev_copy_zero(d, tfs_pool_chunk_addr(nc), tfs_pool_chunk_addr(a->chunk), bytes, 0, 0);
	if (rc < 0) {
		chunk_release(d, nc);
		return rc;
	}
	chunk_release(d, a->chunk);
	a->chunk = nc;
	a->key = key;
	return 0;
}

static uint64_t piece_size(size_t len)
{
	uint64_t p;

	if (len <= PIECE_MIN)
		return len;
	p = (len / RING + 64 * KiB - 1) / (64 * KiB) * (64 * KiB);
	if (p < PIECE_MIN)
		p = PIECE_MIN;
	if (p > PIECE_MAX)
		p = PIECE_MAX;
	return p;
}

static int check_range(struct tfs_alloc *a, uint64_t off, size_t len)
{
	uint64_t bytes;

	if (!a)
		return -EINVAL;
	bytes = tfs_pool_chunk_bytes(a->chunk);
	if (off > bytes || len > bytes - off)
		return -EINVAL;
	return 0;
}

/* src lies in the pinned request buffers: a write's bytes go to the device from where the
 * kernel put them, no CPU copy. */
static int in_io_region(struct tfs_backend *be, const void *src, size_t len)
{
	uintptr_t p = (uintptr_t)src, base = (uintptr_t)be->io;

	return be->io && p >= base && len <= be->io_bytes && p - base <= be->io_bytes - len;
}

/* One DMA between pinned host memory and the device, on a slot's stream, waited for. */
static int copy_pinned(struct cdev *d, void *dst, const void *src, size_t len,
		       enum cudaMemcpyKind kind)
{
	struct slot *s = slot_get(d);
	cudaError_t e, e2;

	e = cudaMemcpyAsync(dst, src, len, kind, s->stream);
	e2 = cudaStreamSynchronize(s->stream);
	slot_put(d, s);
	if (e == cudaSuccess)
		e = e2;
	return e == cudaSuccess ? 0 : cuda_fail(e, kind == cudaMemcpyHostToDevice ?
						"copy to device" : "copy from device", d->ordinal);
}

static int cu_copy_in(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
		      const void *src, size_t len)
{
	const uint8_t *from = src;
	struct cdev *d;
	struct slot *s;
	uint64_t dst, piece, done;
	cudaError_t e = cudaSuccess, e2;
	size_t i;
	int rc;

	rc = check_range(a, off, len);
	if (rc < 0 || !len)
		return rc;
	d = a->dev;
	rc = dev_current(d);
	if (rc < 0)
		return rc;
	dst = tfs_pool_chunk_addr(a->chunk) + off;
	if (in_io_region(be, src, len))
		return copy_pinned(d, (void *)(uintptr_t)dst, src, len, cudaMemcpyHostToDevice);
	piece = piece_size(len);
	s = slot_get(d);
	for (i = 0, done = 0; done < len; i++) {
		uint8_t *buf = s->buf + (i % RING) * PIECE_MAX;
		uint64_t n = len - done < piece ? len - done : piece;

		/* Sub-buffer i % RING is free again once the DMA RING pieces ago finished. */
		if (i >= RING) {
			e = cudaEventSynchronize(s->ev[i % RING]);
			if (e != cudaSuccess)
				break;
		}
		memcpy(buf, from + done, n);
		e = cudaMemcpyAsync((void *)(uintptr_t)(dst + done), buf, n,
				    cudaMemcpyHostToDevice, s->stream);
		/* An event only where piece i + RING will wait for it: each CUDA call costs
		 * microseconds, a fair share of a 1 MiB request. */
		if (e == cudaSuccess && len - done - n > (RING - 1) * piece)
			e = cudaEventRecord(s->ev[i % RING], s->stream);
		if (e != cudaSuccess)
			break;
		done += n;
	}
	/* Also on error: nothing may still read the slot when it is handed back. Once this
	 * returns the bytes are in device memory, for any process that maps the handle. */
	e2 = cudaStreamSynchronize(s->stream);
	slot_put(d, s);
	if (e == cudaSuccess)
		e = e2;
	return e == cudaSuccess ? 0 : cuda_fail(e, "copy to device", d->ordinal);
}

static int cu_copy_out(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
		       void *dst, size_t len)
{
	uint8_t *to = dst;
	struct cdev *d;
	struct slot *s;
	uint64_t src, piece, issued = 0, done;
	cudaError_t e = cudaSuccess, e2;
	size_t i, next = 0;
	int rc;

	(void)be;
	rc = check_range(a, off, len);
	if (rc < 0 || !len)
		return rc;
	d = a->dev;
	rc = dev_current(d);
	if (rc < 0)
		return rc;
	src = tfs_pool_chunk_addr(a->chunk) + off;
	piece = piece_size(len);
	s = slot_get(d);
	/* Keep up to RING pieces in flight; copy each out of its sub-buffer as it lands. */
	for (i = 0, done = 0; done < len; i++) {
		uint64_t n = len - done < piece ? len - done : piece;

		while (e == cudaSuccess && issued < len && next < i + RING) {
			uint64_t m = len - issued < piece ? len - issued : piece;

			e = cudaMemcpyAsync(s->buf + (next % RING) * PIECE_MAX,
					    (const void *)(uintptr_t)(src + issued), m,
					    cudaMemcpyDeviceToHost, s->stream);
			if (e == cudaSuccess)
				e = cudaEventRecord(s->ev[next % RING], s->stream);
			issued += m;
			next++;
		}
		if (e == cudaSuccess)
			e = cudaEventSynchronize(s->ev[i % RING]);
		if (e != cudaSuccess)
			break;
		memcpy(to + done, s->buf + (i % RING) * PIECE_MAX, n);
		done += n;
	}
	e2 = cudaStreamSynchronize(s->stream);
	slot_put(d, s);
	if (e == cudaSuccess)
		e = e2;
	return e == cudaSuccess ? 0 : cuda_fail(e, "copy from device", d->ordinal);
}

static struct rarea *area_get(struct tfs_backend *be)
{
	struct rarea *r;
	cudaError_t e;

	if (my_area && my_gen == be->gen)
		return my_area;
	if (my_failed_gen == be->gen)
		return NULL;
	my_area = NULL;
	my_failed_gen = be->gen;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = memfd_create("tensorfs-read", MFD_CLOEXEC);
	if (r->fd < 0 || ftruncate(r->fd, (off_t)RAREA_BYTES))
		goto fail_fd;
	r->p = mmap(NULL, RAREA_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		    r->fd, 0);
	if (r->p == MAP_FAILED)
		goto fail_fd;
	e = cudaHostRegister(r->p, RAREA_BYTES, cudaHostRegisterPortable);
	if (e != cudaSuccess) {
		tfs_log(LOG_WARNING, "cuda: pinning a read buffer: %s; reads copy twice",
			cudaGetErrorString(e));
		(void)cudaGetLastError();    /* not sticky: leave no error for later calls */
		munmap(r->p, RAREA_BYTES);
		goto fail_fd;
	}
	pthread_mutex_lock(&be->areas_mu);
	r->next = be->areas;
	be->areas = r;
	pthread_mutex_unlock(&be->areas_mu);
	my_failed_gen = 0;
	my_gen = be->gen;
	return my_area = r;
fail_fd:
	if (r->fd >= 0)
		close(r->fd);
	free(r);
	return NULL;
}

static int cu_read_fd(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, size_t len,
		      int *fd, off_t *pos)
{
	struct rarea *r;
	int rc;

	rc = check_range(a, off, len);
	if (rc < 0)
		return rc;
	if (len > RAREA_BYTES || !(r = area_get(be)))
		return -ENOTSUP;
	if ((rc = dev_current(a->dev)) < 0 ||
	    (rc = copy_pinned(a->dev, r->p,
			      (const void *)(uintptr_t)(tfs_pool_chunk_addr(a->chunk) + off), len,
			      cudaMemcpyDeviceToHost)) < 0)
		return rc;
	*fd = r->fd;
	*pos = 0;
	return 0;
}

static void cu_stats(struct tfs_backend *be, struct tfs_backend_stats *st)
{
	int i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < be->ndev; i++) {
		struct cdev *d = atomic_load_explicit(&be->devs[i], memory_order_acquire);
		struct tfs_pool_stats ps;

		if (!d)
			continue;
		zero_drain(d);     /* what was freed counts as free */
		tfs_pool_get_stats(d->pool, &ps);
		st->used += ps.used;
		/* Blocks cached with nothing live are free for the next tensor (and released when
		 * a block cannot be had), so statfs counts only what live tensors hold: df on an
		 * empty mount shows 0 used. */
		st->reserved += ps.reserved - ps.cached;
		st->nallocs += ps.nallocs;
	}
	st->total = be->cap ? be->cap : be->total;
}

/* The cached entry for handle on device (opened now if new), its users count taken; NULL
 * with *err when the driver cannot open it. Caller holds marks_mu. */
static struct mark *mark_get(struct tfs_backend *be, int device, const cudaIpcEventHandle_t *h,
			     cudaError_t *err)
{
	struct mark *m = NULL;
	cudaEvent_t ev;
	int i;

	for (i = 0; i < be->nmarks; i++)
		if (be->marks[i].device == device && !memcmp(&be->marks[i].handle, h, sizeof(*h)))
			m = &be->marks[i];
	if (!m) {
		*err = cudaIpcOpenEventHandle(&ev, *h);
		if (*err != cudaSuccess) {
			cudaGetLastError();      /* not sticky: clear it for the next call */
			return NULL;
		}
		if (be->nmarks < MARKS_MAX) {
			m = &be->marks[be->nmarks++];
		} else {
			/* Full: reuse the least recently used entry nobody waits on. */
			for (i = 0; i < MARKS_MAX; i++)
				if (!be->marks[i].users && (!m || be->marks[i].used < m->used))
					m = &be->marks[i];
			if (!m) {
				cudaEventDestroy(ev);
				*err = cudaErrorMemoryAllocation;
				return NULL;
			}
			cudaEventDestroy(m->ev);
		}
		m->handle = *h;
		m->ev = ev;
		m->device = device;
		m->users = 0;
	}
	m->users++;
	m->used = ++be->mark_clock;
	return m;
}

static int cu_wait_mark(struct tfs_backend *be, struct tfs_alloc *a,
			const uint8_t mark[TFS_IPC_HANDLE_SIZE])
{
	cudaIpcEventHandle_t h;
	struct mark *m;
	cudaError_t e;
	int rc;

	memcpy(&h, mark, sizeof(h));
	rc = dev_current(a->dev);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&be->marks_mu);
	m = mark_get(be, a->dev->ordinal, &h, &e);
	pthread_mutex_unlock(&be->marks_mu);
	if (!m)
		return e == cudaErrorMemoryAllocation ? -ENOMEM : -ESTALE;
	/* Outside the lock: the producer's kernel may run for a while, and other tensors'
	 * reads must not wait for it. users keeps the entry from being reused meanwhile. */
	e = cudaEventSynchronize(m->ev);
	pthread_mutex_lock(&be->marks_mu);
	m->users--;
	pthread_mutex_unlock(&be->marks_mu);
	return e == cudaSuccess ? 0 : cuda_fail(e, "waiting for the written mark", a->dev->ordinal);
}

const struct tfs_backend_ops tfs_backend_cuda = {
	.name = "cuda",
	.init = cu_init,
	.fini = cu_fini,
	.device_count = cu_device_count,
	.alloc = cu_alloc,
	.free = cu_free,
	.resize = cu_resize,
	.export_handle = cu_export_handle,
	.set_owner = cu_set_owner,
	.copy_in = cu_copy_in,
	.copy_out = cu_copy_out,
	.wait_mark = cu_wait_mark,
	.io_region = cu_io_region,
	.read_fd = cu_read_fd,
	.stats = cu_stats,
};
