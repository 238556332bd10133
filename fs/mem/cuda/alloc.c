/* Allocations: tensors' chunks of the devices' pools and the cudaMalloc blocks behind them,
 * resize, IPC handles, owner moves, and stats(). Who may share a block: see
 * cuda_internal.h.
 *
 * Ownership changes (set_owner: chown, chmod, rename to another directory): a tensor alone in its block keeps its memory and the block
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mem/cuda/cuda_internal.h"
#include "mem/keeper/keeper.h"
#include "meta.h"
#include "log.h"

/* tfs_pool_alloc, trying once more when the device is full: memory freed may still be on
 * its way back through the zeroing thread. */
static int pool_alloc(struct cdev *d, struct tfs_pool_key key, uint64_t bytes,
		      struct tfs_pool_chunk **out)
{
	int rc = tfs_pool_alloc(d->pool, key, bytes, 0, out);

	if (rc == -ENOSPC) {
		tfs_cuda_zero_drain(d);
		rc = tfs_pool_alloc(d->pool, key, bytes, 0, out);
	}
	return rc;
}

/* ---- pool callbacks: run under the pool's lock, on a thread whose current device is the
 * pool's ---- */

/* A block from the keeper (keeper.h), mapped here: 0, -ENOMEM (the device is full: the pool
 * trims its cache and asks again) or -EIO. */
static int keeper_block(struct cdev *d, uint64_t size, struct cblock *cb)
{
	struct tfs_keeper_req req = { .op = TFS_KEEPER_ALLOC, .size = size, .device = d->ordinal };
	struct tfs_keeper_rep rep;
	cudaError_t e;
	int rc = tfs_keeper_call(&req, &rep, NULL);

	if (rc)
		return rc == -ENOMEM ? -ENOMEM : -EIO;
	memcpy(&cb->handle, rep.handle, sizeof(cb->handle));
	e = cudaIpcOpenMemHandle(&cb->ptr, cb->handle, cudaIpcMemLazyEnablePeerAccess);
	if (e != cudaSuccess) {
		struct tfs_keeper_req fr = { .op = TFS_KEEPER_FREE, .id = rep.id };

		tfs_cuda_fail(e, "cudaIpcOpenMemHandle", d->ordinal);
		tfs_keeper_call(&fr, &rep, NULL);
		return -EIO;
	}
	cb->have_handle = 1;
	cb->kid = rep.id;
	return 0;
}

/* The block's memory goes: unmapped and given back to the keeper, or freed. */
static void block_drop(struct cblock *cb, struct cdev *d)
{
	struct tfs_keeper_req req = { .op = TFS_KEEPER_FREE, .id = cb->kid };
	struct tfs_keeper_rep rep;
	cudaError_t e;

	if (!cb->kid) {
		e = cudaFree(cb->ptr);
		if (e != cudaSuccess)
			tfs_cuda_fail(e, "cudaFree", d->ordinal);
		return;
	}
	e = cudaIpcCloseMemHandle(cb->ptr);
	if (e != cudaSuccess)
		tfs_cuda_fail(e, "cudaIpcCloseMemHandle", d->ordinal);
	if (tfs_keeper_call(&req, &rep, NULL))
		tfs_log(LOG_WARNING, "cuda: device %d: the keeper did not free a block", d->ordinal);
}

#define cap_of tfs_cuda_cap

void tfs_cuda_set_caps(struct tfs_backend *be, const struct tfs_tier_sizes *caps,
		       const struct tfs_tier_sizes *prealloc)
{
	be->caps = *caps;
	be->prealloc = *prealloc;
	/* init set up its default device before these were known */
	for (int i = 0; i < be->ndev; i++) {
		struct cdev *d = atomic_load(&be->devs[i]);

		if (d && tfs_cuda_dev_repool(d))
			tfs_log(LOG_ERR, "cuda: device %d: --preallocate: out of memory", i);
	}
}

/* The smallest piece of the reserve that holds size when one does (--preallocate: a
 * segment, or a run for a larger tensor, given whole to the key), else a new block; the
 * tier's cap or a full device spends the reserve's idle pieces first (a tensor larger
 * than every idle run). */
static int block_get(void *ctx, uint64_t *size, uint64_t *base, void **cookie)
{
	struct cdev *d = ctx;
	struct cblock *cb;
	int rc;

	if (!(cb = tfs_cuda_prealloc_take(d, *size))) {
		struct cblock *idle;

		/* The smallest idle pieces first: a run left may serve the next. */
		while ((rc = tfs_cuda_block_new(d, *size, &cb)) && rc != -EIO &&
		       (idle = tfs_cuda_prealloc_take(d, 0)))
			tfs_cuda_block_drop(d, idle, idle->size);
		if (rc)
			return rc;
	}
	*size = cb->size;
	*base = (uint64_t)(uintptr_t)cb->ptr;
	*cookie = cb;
	return 0;
}

int tfs_cuda_block_new(struct cdev *d, uint64_t size, struct cblock **out)
{
	struct tfs_backend *be = d->be;
	struct cblock *cb;
	uint64_t before;
	cudaError_t e;

	if (tfs_cuda_vmm) {
		/* --memory vmm packs small tensors into VMM allocations (docs/vmm.md): the
		 * block is one, made (by the keeper), zeroed and counted by vmm.c. */
		int rc;

		if (!(cb = calloc(1, sizeof(*cb))))
			return -ENOMEM;
		if ((rc = tfs_cuda_vmm_block_get(d, size, &cb->vmm)) < 0) {
			free(cb);
			return rc;
		}
		cb->ptr = (void *)(uintptr_t)cb->vmm->va;
		cb->size = size;
		*out = cb;
		return 0;
	}
	before = atomic_fetch_add(&d->reserved, size);
	if (cap_of(be, d->ordinal) && before + size > cap_of(be, d->ordinal)) {
		atomic_fetch_sub(&d->reserved, size);
		return -ENOSPC;
	}
	cb = calloc(1, sizeof(*cb));
	if (!cb) {
		atomic_fetch_sub(&d->reserved, size);
		return -ENOMEM;
	}
	if (tfs_keeper_present()) {
		int rc = keeper_block(d, size, cb);

		if (rc) {
			atomic_fetch_sub(&d->reserved, size);
			free(cb);
			return rc;
		}
		e = cudaSuccess;
	} else {
		e = cudaMalloc(&cb->ptr, size);
	}
	if (e != cudaSuccess) {
		/* Expected when the device is full: the pool trims its cache and retries, and
		 * the caller reports ENOSPC, so no error here. */
		tfs_log(LOG_DEBUG, "cuda: device %d: cudaMalloc(%" PRIu64 "): %s", d->ordinal,
			size, cudaGetErrorString(e));
		(void)cudaGetLastError();
		atomic_fetch_sub(&d->reserved, size);
		free(cb);
		return e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO;
	}
	/* cudaMalloc makes no promise about what the memory holds. */
	if (tfs_cuda_dev_copy_zero(d, 0, 0, 0, (uint64_t)(uintptr_t)cb->ptr, size) < 0) {
		block_drop(cb, d);
		atomic_fetch_sub(&d->reserved, size);
		free(cb);
		return -EIO;
	}
	cb->size = size;
	*out = cb;
	return 0;
}

void tfs_cuda_block_drop(struct cdev *d, struct cblock *cb, uint64_t size)
{
	if (cb->vmm) {
		tfs_cuda_vmm_block_put(d, cb->vmm);
		free(cb);
		return;
	}
	block_drop(cb, d);
	atomic_fetch_sub(&d->reserved, size);
	free(cb);
}

static void block_put(void *ctx, uint64_t base, uint64_t size, void *cookie)
{
	(void)base;
	tfs_cuda_block_drop(ctx, cookie, size);
}

const struct tfs_pool_block_ops tfs_cuda_block_ops = { block_get, block_put };

/* A preallocated device's reserve, made up to its size (what adopted tensors hold
 * counts). */
static int prealloc_fill_one(struct cdev *d)
{
	uint64_t held = atomic_load(&d->reserved), n, piece;
	int rc = 0;

	/* What is missing, laid out as pool.h says: runs for tensors larger than a segment,
	 * single segments for keys that need little. */
	n = held < d->prealloc ? (d->prealloc - held + d->seg - 1) / d->seg : 0;
	for (uint64_t k = 0; atomic_load(&d->reserved) < d->prealloc &&
	     (piece = tfs_pool_prealloc_piece(n, k)); k++) {
		struct cblock *cb;

		if ((rc = tfs_cuda_block_new(d, piece * d->seg, &cb)))
			break;
		if ((rc = tfs_cuda_prealloc_push(d, cb))) {
			tfs_cuda_block_drop(d, cb, cb->size);
			break;
		}
	}
	tfs_log(rc ? LOG_ERR : LOG_INFO, "cuda: device %d: %" PRIu64 " MiB preallocated in "
		"segments of %" PRIu64 " MiB and runs of up to %d%s%s", d->ordinal,
		(uint64_t)atomic_load(&d->reserved) / MiB, d->seg / MiB, TFS_POOL_RUN_MAX,
		rc ? ": " : "",
		rc ? strerror(-rc) : "");
	return rc;
}

int tfs_cuda_prealloc_fill(struct tfs_backend *be)
{
	int first = 0;

	for (int i = 0; i < be->ndev && i < TFS_DEVICES_MAX; i++) {
		struct cdev *d;
		int rc;

		if (!(be->prealloc.devmask >> i & 1))
			continue;
		if ((rc = tfs_cuda_dev_get(be, i, &d)) == 0 && d->seg)
			rc = prealloc_fill_one(d);
		if (rc && !first)
			first = rc;
	}
	return first;
}

/* ---- operations ---- */

int tfs_cuda_alloc(struct tfs_backend *be, int device, uint64_t bytes, uid_t uid, gid_t gid,
		   mode_t mode, uint64_t dir, struct tfs_alloc **out)
{
	struct tfs_alloc *a;
	struct cdev *d;
	int rc;

	if (!bytes || !out)
		return -EINVAL;
	rc = tfs_cuda_dev_get(be, device, &d);
	if (rc < 0)
		return rc;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->dev = d;
	a->key = tfs_pool_reader_key(uid, gid, mode, dir);
	/* --memory vmm: a tensor of its own allocation, or a small one packed into a shared
	 * one by the pool, under the same key rule as legacy blocks. */
	rc = tfs_cuda_vmm && bytes > TFS_VMM_PACK_MAX ? tfs_cuda_vmm_alloc(d, bytes, a) :
	     pool_alloc(d, a->key, bytes, &a->chunk);
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

void tfs_cuda_free(struct tfs_backend *be, struct tfs_alloc *a)
{
	(void)be;
	if (!a)
		return;
	if (a->vmm) {
		tfs_cuda_vmm_free(a);
		free(a);
		return;
	}
	/* cudaFree, when the pool releases a block, acts on the current device. */
	if (tfs_cuda_dev_current(a->dev) == 0)
		tfs_cuda_chunk_release(a->dev, a->chunk);
	else
		tfs_log(LOG_ERR, "cuda: device %d: leaking an allocation", a->dev->ordinal);
	free(a);
}

int tfs_cuda_resize(struct tfs_backend *be, struct tfs_alloc **ap, uint64_t new_bytes)
{
	struct tfs_alloc *a = ap ? *ap : NULL;
	struct tfs_pool_chunk *moved, *back;
	struct cdev *d;
	uint64_t old, addr;
	int rc;

	(void)be;
	if (!a || !new_bytes)
		return -EINVAL;
	if (a->vmm)
		return tfs_cuda_vmm_resize(a, new_bytes);
	d = a->dev;
	old = tfs_pool_chunk_bytes(a->chunk);
	if (new_bytes == old)
		return 0;
	rc = tfs_cuda_dev_current(d);
	if (rc < 0)
		return rc;
	if (tfs_cuda_vmm && new_bytes > TFS_VMM_PACK_MAX) {
		/* Packed no longer: an allocation of its own, as a new tensor of that size. */
		struct tfs_alloc na = { .dev = d };

		if ((rc = tfs_cuda_vmm_alloc(d, new_bytes, &na)) < 0)
			return rc;
		rc = tfs_cuda_dev_copy_zero(d, na.vmm->va, tfs_pool_chunk_addr(a->chunk), old, 0, 0);
		if (rc < 0) {
			tfs_cuda_vmm_free(&na);
			return rc;
		}
		tfs_cuda_chunk_release(d, a->chunk);
		a->chunk = NULL;
		a->vmm = na.vmm;
		return 0;
	}
	/* In place when it shrinks or the space behind it is free; otherwise into a new chunk
	 * with room to spare (see tfs_pool_growth_room): a file written by appends grows
	 * 1.25x per move, so its bytes are copied a bounded number of times, at the price of
	 * up to 25% unused room behind the last move (free for this tensor's next growth). */
	addr = tfs_pool_chunk_addr(a->chunk);
	/* A shrink may give its tail back to the pool, which hands out only zeroed memory. */
	if (new_bytes < old) {
		uint64_t cap = tfs_pool_chunk_capacity(a->chunk);

		rc = tfs_cuda_dev_copy_zero(d, 0, 0, 0, addr + new_bytes, cap - new_bytes);
		if (rc < 0)
			return rc;
	}
	rc = tfs_pool_resize(d->pool, a->chunk, new_bytes, &moved);
	if (rc == -ENOSPC) {
		tfs_cuda_zero_drain(d);     /* as pool_alloc */
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
		rc = tfs_cuda_dev_copy_zero(d, 0, 0, 0, addr + old, new_bytes - old);
		if (rc < 0 && tfs_pool_resize(d->pool, a->chunk, old, &back) == 0 && back)
			tfs_cuda_chunk_release(d, back);   /* shrinking never moves; be safe */
		return rc;
	}
	addr = tfs_pool_chunk_addr(moved);
	rc = tfs_cuda_dev_copy_zero(d, addr, tfs_pool_chunk_addr(a->chunk), old, 0, 0);
	if (rc < 0) {
		tfs_cuda_chunk_release(d, moved);
		return rc;
	}
	/* *ap keeps pointing at a; its memory, handle and offset are new. */
	tfs_cuda_chunk_release(d, a->chunk);
	a->chunk = moved;
	return 0;
}

int tfs_cuda_export_handle(struct tfs_backend *be, struct tfs_alloc *a,
			   uint8_t handle[TFS_IPC_HANDLE_SIZE], uint64_t *offset)
{
	struct cdev *d;
	struct cblock *cb;
	cudaError_t e = cudaSuccess;
	int rc;

	(void)be;
	if (!a || !handle || !offset)
		return -EINVAL;
	if (a->vmm) {
		tfs_cuda_vmm_handle(a, handle);
		*offset = 0;
		return 0;
	}
	d = a->dev;
	rc = tfs_cuda_dev_current(d);
	if (rc < 0)
		return rc;
	cb = tfs_pool_chunk_cookie(a->chunk);
	if (cb->vmm) {
		/* A packed VMM tensor: its block's handle, which grants nothing by itself; the
		 * socket hands out the whole allocation, as a legacy handle maps its block. */
		memcpy(handle, cb->vmm->handle, TFS_IPC_HANDLE_SIZE);
		*offset = tfs_pool_chunk_offset(a->chunk);
		return 0;
	}
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
		return tfs_cuda_fail(e, "cudaIpcGetMemHandle", d->ordinal);
	*offset = tfs_pool_chunk_offset(a->chunk);
	return 0;
}

int tfs_cuda_set_owner(struct tfs_backend *be, struct tfs_alloc *a, uid_t uid, gid_t gid,
		       mode_t mode, uint64_t dir, unsigned flags)
{
	struct tfs_pool_key key = tfs_pool_reader_key(uid, gid, mode, dir);
	struct tfs_pool_chunk *nc;
	struct cdev *d;
	uint64_t bytes;
	int rc;

	(void)be;
	if (!a)
		return -EINVAL;
	/* A VMM tensor shares its memory with no other: who may have it is checked at each
	 * fetch from the handle socket. */
	if (a->vmm)
		return 0;
	d = a->dev;
	rc = tfs_pool_rekey(d->pool, a->chunk, key);
	if (rc != -EBUSY) {
		if (rc == 0)
			a->key = key;
		return rc;
	}
	/* The block holds tensors of the old readers: move out of it. */
	if (flags & TFS_BE_NOMOVE)
		return -EBUSY;
	rc = tfs_cuda_dev_current(d);
	if (rc < 0)
		return rc;
	bytes = tfs_pool_chunk_bytes(a->chunk);
	rc = pool_alloc(d, key, bytes, &nc);
	if (rc < 0) {
		tfs_log(LOG_INFO, "cuda: device %d: moving %" PRIu64 " bytes to a new owner: %s",
			d->ordinal, bytes, strerror(-rc));
		return rc;
	}
	rc = tfs_cuda_dev_copy_zero(d, tfs_pool_chunk_addr(nc), tfs_pool_chunk_addr(a->chunk),
				    bytes, 0, 0);
	if (rc < 0) {
		tfs_cuda_chunk_release(d, nc);
		return rc;
	}
	tfs_cuda_chunk_release(d, a->chunk);
	a->chunk = nc;
	a->key = key;
	return 0;
}

/* Lets a and b reach each other's memory where the hardware allows (NVLink, PCIe), so
 * that peer copies go straight between them instead of through host memory. Called with a
 * current; leaves a current. Already enabled, or impossible: nothing to do. */
static void peer_enable(struct cdev *a, struct cdev *b)
{
	int can = 0;

	if (cudaDeviceCanAccessPeer(&can, a->ordinal, b->ordinal) != cudaSuccess || !can) {
		(void)cudaGetLastError();
		return;
	}
	if (cudaDeviceEnablePeerAccess(b->ordinal, 0) != cudaSuccess)
		(void)cudaGetLastError();
	if (tfs_cuda_dev_current(b) == 0 && cudaDeviceEnablePeerAccess(a->ordinal, 0) != cudaSuccess)
		(void)cudaGetLastError();
	tfs_cuda_dev_current(a);
}

/* The copy of a move done by the memory keeper, which owns both blocks: its cudaMemcpyPeer
 * runs over peer access at 395 GB/s between two H200s, where the same copy between the
 * daemon's IPC imports of the blocks went through host memory at 38 (tests/bench/
 * RESULTS-gpu.md, issue 18). 0; a negative errno when it cannot (blocks of the daemon's
 * own, an older keeper, a failed copy): the caller copies itself. */
static int keeper_copy(struct tfs_pool_chunk *dst, struct tfs_pool_chunk *src, uint64_t len)
{
	struct cblock *db = tfs_pool_chunk_cookie(dst), *sb = tfs_pool_chunk_cookie(src);
	int rc;

	if (!db || !sb || !db->kid || !sb->kid)
		return -ENOTSUP;
	rc = tfs_keeper_copy(db->kid, tfs_pool_chunk_offset(dst), sb->kid,
			     tfs_pool_chunk_offset(src), len);
	if (rc < 0 && rc != -ENOTSUP)
		tfs_log(LOG_WARNING, "cuda: the keeper's copy of a move failed (%s): copying here",
			strerror(-rc));
	return rc;
}

/* The move; commit(arg), when set, once a names the new memory and before the old goes
 * (backend.h's move_sum: the caller writes the record there). */
static int move_commit(struct tfs_backend *be, struct tfs_alloc *a, int device,
		       void (*commit)(void *arg), void *arg)
{
	struct tfs_pool_chunk *nc, *oc;
	struct cdev *from, *to;
	double t_start = tfs_cuda_now_ms(), t0;
	uint64_t bytes;
	int rc, by_keeper;

	if (!a)
		return -EINVAL;
	from = a->dev;
	if (device == from->ordinal)
		return 0;
	rc = tfs_cuda_dev_get(be, device, &to);
	if (rc < 0)
		return rc;
	peer_enable(to, from);
	if (a->vmm) {
		struct tfs_alloc old = { .dev = from };
		struct tfs_vmm *nv;
		double first;

		/* The daemon maps VMM memory with access for every device: no keeper round trip. */
		if ((rc = tfs_cuda_vmm_move(to, from, a->vmm, &nv, &first)) < 0)
			return rc;
		tfs_log(LOG_INFO, "cuda: moved %" PRIu64 " bytes from device %d to %d: %.1f ms "
			"to place the first piece, %.1f ms in all (by the daemon, VMM, %d piece%s)",
			nv->bytes, from->ordinal, device, first, tfs_cuda_now_ms() - t_start, nv->n,
			nv->n == 1 ? "" : "s");
		old.vmm = a->vmm;
		a->vmm = nv;
		a->dev = to;
		if (commit)
			commit(arg);
		tfs_cuda_vmm_free_later(&old);
		return 0;
	}
	bytes = tfs_pool_chunk_bytes(a->chunk);
	rc = pool_alloc(to, a->key, bytes, &nc);
	if (rc < 0) {
		tfs_log(LOG_INFO, "cuda: moving %" PRIu64 " bytes from device %d to %d: %s",
			bytes, from->ordinal, device, strerror(-rc));
		return rc;
	}
	t0 = tfs_cuda_now_ms();
	rc = keeper_copy(nc, a->chunk, bytes);
	by_keeper = rc == 0;
	if (rc < 0)
		rc = tfs_cuda_peer_copy(to, tfs_pool_chunk_addr(nc), from,
					tfs_pool_chunk_addr(a->chunk), bytes);
	tfs_log(LOG_INFO, "cuda: moved %" PRIu64 " bytes from device %d to %d: %.1f ms to place, "
		"%.1f ms to copy (%s)", bytes, from->ordinal, device, t0 - t_start,
		tfs_cuda_now_ms() - t0, by_keeper ? "by the memory keeper" : "by the daemon");
	if (rc < 0) {
		tfs_cuda_chunk_release(to, nc);
		return rc;
	}
	oc = a->chunk;
	a->dev = to;
	a->chunk = nc;
	if (commit)
		commit(arg);
	rc = tfs_cuda_dev_current(from);
	if (rc == 0)
		tfs_cuda_chunk_release(from, oc);
	else
		tfs_log(LOG_ERR, "cuda: device %d: leaking a moved tensor's old memory",
			from->ordinal);
	return 0;
}

int tfs_cuda_move(struct tfs_backend *be, struct tfs_alloc *a, int device)
{
	return move_commit(be, a, device, NULL, NULL);
}

int tfs_cuda_move_sum(struct tfs_backend *be, struct tfs_alloc *a, int device, uint64_t *sum,
		      void (*commit)(void *arg), void *arg)
{
	/* Between GPUs nothing is summed: a checksum asked for is the host tier's. */
	if (*sum)
		return -EINVAL;
	return move_commit(be, a, device, commit, arg);
}

void tfs_cuda_stats(struct tfs_backend *be, int device, struct tfs_backend_stats *st)
{
	struct cdev *d;
	struct tfs_pool_stats ps;

	memset(st, 0, sizeof(*st));
	if (device < 0 || device >= be->ndev)
		return;
	st->total = be->dev_total[device];
	if (cap_of(be, device) && (!st->total || cap_of(be, device) < st->total))
		st->total = cap_of(be, device);
	d = atomic_load_explicit(&be->devs[device], memory_order_acquire);
	if (!d)
		return;
	tfs_cuda_zero_drain(d);     /* what was freed counts as free */
	tfs_pool_get_stats(d->pool, &ps);
	st->used = ps.used;
	/* Blocks cached with nothing live are free for the next tensor (and released when a
	 * block cannot be had), so statfs counts only what live tensors hold: df on an empty
	 * mount shows 0 used. */
	st->reserved = ps.reserved - ps.cached;
	st->nallocs = ps.nallocs;
	/* --memory vmm: what tensors of their own allocation hold, beside the pool. */
	st->used += atomic_load(&d->vmm_used);
	st->reserved += atomic_load(&d->vmm_reserved);
	st->nallocs += atomic_load(&d->vmm_n);
	if (d->seg)
		st->prealloc = atomic_load(&d->reserved);
}

/* ---- restart: the keeper's blocks back into the pools ---- */

int tfs_cuda_list_found(struct tfs_backend *be)
{
	struct tfs_keeper_req req = { .op = TFS_KEEPER_LIST };
	struct tfs_keeper_rep rep;
	size_t cap = 0;
	int rc, fd = -1;

	if (!tfs_keeper_present())
		return 0;
	while ((rc = tfs_keeper_call(&req, &rep, &fd)) == 0) {
		struct kfound *f;
		int vmm = memcmp(rep.handle, TFS_VMM_MAGIC, 8) == 0;

		req.id = rep.id;
		/* The host tier's are the host backend's to adopt (the handover registry
		 * kept its copy of their descriptors); a VMM allocation needs its own. */
		if (rep.device == TFS_DEVICE_CPU || !vmm || fd < 0) {
			if (fd >= 0)
				close(fd);
			fd = -1;
			if (rep.device == TFS_DEVICE_CPU)
				continue;
			if (vmm) {
				tfs_log(LOG_ERR, "cuda: a VMM allocation of the keeper came without "
					"its descriptor");
				continue;
			}
		}
		if (be->nfound == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct kfound *nf = realloc(be->found, ncap * sizeof(*nf));

			if (!nf) {
				if (fd >= 0)
					close(fd);
				return -ENOMEM;
			}
			be->found = nf;
			cap = ncap;
		}
		f = &be->found[be->nfound++];
		memset(f, 0, sizeof(*f));
		f->id = rep.id;
		f->size = rep.size;
		f->device = rep.device;
		f->vfd = fd;
		fd = -1;
		memcpy(&f->handle, rep.handle, sizeof(f->handle));
	}
	return rc == -ENOENT ? 0 : rc;
}

int tfs_cuda_adopt(struct tfs_backend *be, const struct tfs_meta *m, struct tfs_alloc **out)
{
	struct tfs_vmm_part parts[TFS_VMM_CHUNKS_MAX];
	struct kfound *f = NULL, *which[TFS_VMM_CHUNKS_MAX];
	struct tfs_alloc *a;
	struct cdev *d;
	cudaError_t e;
	int rc, n;

	for (size_t i = 0; i < be->nfound && !f; i++)
		if (tfs_cuda_found_names(&be->found[i], m))
			f = &be->found[i];
	if (!f)
		return -ENOENT;
	rc = tfs_cuda_dev_get(be, m->device, &d);
	if (rc < 0)
		return rc;
	if (f->vfd >= 0 && m->bytes <= TFS_VMM_PACK_MAX) {
		/* A small tensor of --memory vmm: packed, its allocation a block of the pool
		 * (an allocation of its own that shrank becomes a block too: harmless). */
		if (!f->cb) {
			struct cblock *cb = calloc(1, sizeof(*cb));

			if (!cb)
				return -ENOMEM;
			rc = tfs_cuda_vmm_block_adopt(d, f->vfd, f->id, f->size,
						      (const uint8_t *)&f->handle, &cb->vmm);
			if (rc < 0) {
				free(cb);
				return rc;
			}
			cb->ptr = (void *)(uintptr_t)cb->vmm->va;
			f->cb = cb;
		}
	} else if (f->vfd >= 0) {
		/* A VMM allocation of its own is one tensor's: adopted once. */
		if (f->used || f->cb)
			return -EINVAL;
		if (!(a = calloc(1, sizeof(*a))))
			return -ENOMEM;
		a->dev = d;
		n = tfs_cuda_vmm_found_chunks(be, f, parts, which);
		rc = tfs_cuda_vmm_adopt(d, parts, n, m, a);
		if (rc < 0) {
			free(a);
			return rc;
		}
		for (int i = 0; i < n; i++) {
			close(which[i]->vfd);
			which[i]->vfd = -1;
			which[i]->used = 1;
		}
		*out = a;
		return 0;
	} else if (!f->cb) {
		struct cblock *cb = calloc(1, sizeof(*cb));

		if (!cb)
			return -ENOMEM;
		cb->handle = f->handle;
		e = cudaIpcOpenMemHandle(&cb->ptr, cb->handle, cudaIpcMemLazyEnablePeerAccess);
		if (e != cudaSuccess) {
			free(cb);
			return tfs_cuda_fail(e, "cudaIpcOpenMemHandle", d->ordinal);
		}
		cb->have_handle = 1;
		cb->kid = f->id;
		f->cb = cb;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->dev = d;
	/* The key the tensor was placed under: the record keeps everything it derives from.
	 * A record of an older daemon has no dir: its block may mix what directory keys
	 * keep apart, and stays as it was (its tensors move on chmod, chown or rename). */
	a->key = m->dir ? tfs_pool_reader_key(m->uid, m->gid, m->mode, m->dir) :
		 tfs_pool_legacy_key(m->uid, m->gid, m->mode);
	rc = tfs_pool_adopt(d->pool, a->key, (uint64_t)(uintptr_t)f->cb->ptr, f->size, f->cb,
			    m->ipc_offset, m->bytes, &a->chunk);
	if (rc < 0) {
		free(a);
		return rc;
	}
	if (!f->used && !f->cb->vmm)    /* vmm.c counted a VMM block at its import */
		atomic_fetch_add(&d->reserved, f->size);
	f->used = 1;
	*out = a;
	return 0;
}

/* A block opened for adoption that no tensor took: unmapped here; the memory stays the
 * keeper's (the caller frees it there or leaves it). */
static void found_cb_drop(struct tfs_backend *be, struct kfound *f)
{
	struct cblock *cb = f->cb;
	struct cdev *d;

	if (cb->vmm) {
		cb->vmm->c[0].kid = 0;
		if (tfs_cuda_dev_get(be, f->device, &d) == 0)
			tfs_cuda_vmm_block_put(d, cb->vmm);
	} else {
		cudaIpcCloseMemHandle(cb->ptr);
	}
	free(cb);
	f->cb = NULL;
}

static void zero_free(void *ctx, uint64_t addr, uint64_t len)
{
	tfs_cuda_dev_copy_zero(ctx, 0, 0, 0, addr, len);
}

void tfs_cuda_found_forget(struct tfs_backend *be)
{
	for (size_t i = 0; i < be->nfound; i++) {
		struct kfound *f = &be->found[i];

		if (f->vfd >= 0)
			close(f->vfd);
		if (f->used || !f->cb)
			continue;
		cudaSetDevice(f->device);
		found_cb_drop(be, f);
	}
	free(be->found);
	be->found = NULL;
	be->nfound = 0;
}

int tfs_cuda_adopt_end(struct tfs_backend *be)
{
	int n = 0;

	for (size_t i = 0; i < be->nfound; i++) {
		struct kfound *f = &be->found[i];
		struct tfs_keeper_req req = { .op = TFS_KEEPER_FREE, .id = f->id };
		struct tfs_keeper_rep rep;

		if (f->vfd >= 0)
			close(f->vfd);
		if (f->used)
			continue;
		if (f->cb) {
			cudaSetDevice(f->device);
			found_cb_drop(be, f);
		}
		tfs_log(LOG_NOTICE, "cuda: device %d: freeing a block of %" PRIu64 " bytes no "
			"record names", f->device, f->size);
		tfs_keeper_call(&req, &rep, NULL);
		n++;
	}
	if (be->nfound) {
		for (int i = 0; i < be->ndev; i++) {
			struct cdev *d = atomic_load_explicit(&be->devs[i], memory_order_acquire);

			if (d && tfs_cuda_dev_current(d) == 0)
				tfs_pool_adopt_end(d->pool, zero_free, d);
		}
	}
	free(be->found);
	be->found = NULL;
	be->nfound = 0;
	/* What no record took is freed: the reservation is made whole now (a start reserves
	 * it all; a restart what the crash left unclaimed). */
	tfs_cuda_prealloc_fill(be);
	return n;
}
