/* --memory vmm (docs/vmm.md), the daemon's side: each tensor its own allocation through
 * the CUDA virtual memory management API, exported as a POSIX file descriptor that the
 * handle socket hands to processes the mount lets read the tensor. With a keeper, the
 * keeper makes the allocation (keeper_vmm.c) and sends its descriptor, which this daemon
 * imports; both keep a descriptor (the two holders, handover.h), so SIGKILL of either
 * loses nothing. Without one (a backend used on its own) the daemon makes it itself.
 * Either way the daemon maps the allocation at an address it reserves, with read-write
 * access for every device, so the copies of copy.c and host_tier.c treat it as any device
 * pointer; the driver frees the memory once the last descriptor, handle and mapping of it
 * (here, in the keeper and in every importer) is gone. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mem/cuda/cuda_internal.h"
#include "mem/cuda/vmm_drv.h"
#include "mem/keeper/keeper.h"
#include "log.h"
#include "meta.h"          /* TFS_VMM_MAGIC */

int tfs_cuda_vmm;

void tfs_cuda_set_vmm(int on)
{
	tfs_cuda_vmm = !!on;
}

/* Read-write access for every device of the machine (so that any GPU's kernels and this
 * daemon's copies reach it), or, where the driver refuses that (no peer access between
 * some pair), for the allocation's own device only. */
static int set_access(const struct tfs_vmm_drv *drv, CUdeviceptr va, size_t size, int ndev,
		      int own)
{
	CUmemAccessDesc *d = calloc((size_t)ndev, sizeof(*d));
	CUresult r;
	int i;

	if (!d)
		return -ENOMEM;
	for (i = 0; i < ndev; i++) {
		d[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		d[i].location.id = i;
		d[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	}
	r = drv->MemSetAccess(va, size, d, (size_t)ndev);
	if (r != CUDA_SUCCESS && ndev > 1) {
		tfs_log(LOG_INFO, "cuda: device %d: VMM access for all %d devices refused; "
			"own device only", own, ndev);
		d[0].location.id = own;
		r = drv->MemSetAccess(va, size, d, 1);
	}
	free(d);
	return r == CUDA_SUCCESS ? 0 : tfs_vmm_fail(r, "cuMemSetAccess", own);
}

/* Read-write access for own alone: a move's pieces while their copies are queued
 * (move_pieces says why). */
static int set_access_own(const struct tfs_vmm_drv *drv, CUdeviceptr va, size_t size, int own)
{
	CUmemAccessDesc d = { .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = own },
			      .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUresult r = drv->MemSetAccess(va, size, &d, 1);

	return r == CUDA_SUCCESS ? 0 : tfs_vmm_fail(r, "cuMemSetAccess", own);
}

/* Gives chunk c back: its mapping at va (when mapped), its handle, descriptor and the
 * keeper's allocation. */
static void chunk_drop(const struct tfs_vmm_drv *drv, struct tfs_vmm_chunk *c, uint64_t va,
		       int ordinal)
{
	CUresult r;

	if (drv && c->mapped && (r = drv->MemUnmap(va, c->size)) != CUDA_SUCCESS)
		tfs_vmm_fail(r, "cuMemUnmap", ordinal);
	c->mapped = 0;
	if (drv && c->have_h && (r = drv->MemRelease(c->h)) != CUDA_SUCCESS)
		tfs_vmm_fail(r, "cuMemRelease", ordinal);
	c->have_h = 0;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->kid) {
		struct tfs_keeper_req req = { .op = TFS_KEEPER_FREE, .id = c->kid };
		struct tfs_keeper_rep rep;

		if (tfs_keeper_call(&req, &rep, NULL))
			tfs_log(LOG_WARNING, "cuda: device %d: the keeper did not free a VMM "
				"allocation", ordinal);
		c->kid = 0;
	}
}

/* Undoes whatever of v was done (every chunk, the reservation), frees v. The last chunk
 * goes first: a chunk the keeper links to the first one never outlives it, so a crash
 * meanwhile leaves no link to an id the keeper may give again. */
static void vmm_destroy(struct tfs_vmm *v, int ordinal)
{
	const struct tfs_vmm_drv *drv = tfs_vmm_drv();
	uint64_t off = 0;
	CUresult r;

	for (int i = 0; i < v->n; i++)
		off += v->c[i].size;
	for (int i = v->n - 1; i >= 0; i--) {
		off -= v->c[i].size;
		chunk_drop(drv, &v->c[i], v->va + off, ordinal);
	}
	if (drv && v->va && (r = drv->MemAddressFree(v->va, v->resv)) != CUDA_SUCCESS)
		tfs_vmm_fail(r, "cuMemAddressFree", ordinal);
	free(v);
}

/* v destroyed and its size no longer counted in d->reserved. */
static void vmm_drop(struct cdev *d, struct tfs_vmm *v)
{
	uint64_t size = v->size;

	vmm_destroy(v, d->ordinal);
	atomic_fetch_sub(&d->reserved, size);
}

/* d current on this thread: 0, or -errno with the leak said (without the context a
 * mapping cannot go: it is leaked rather than crash). */
static int current_or_leak(struct cdev *d)
{
	int rc = tfs_cuda_dev_current(d);

	if (rc < 0)
		tfs_log(LOG_ERR, "cuda: device %d: leaking a VMM allocation", d->ordinal);
	return rc;
}

/* Chunk c (c->size) from the keeper: c->fd, c->kid, c->h imported, *handle the keeper's
 * (NULL: not wanted). head: the keeper's id of the tensor's first chunk, which c continues
 * at off (keeper.h's link), 0 for a first chunk. On error what c holds is for chunk_drop. */
static int from_keeper(struct cdev *d, struct tfs_vmm_chunk *c, uint64_t head, uint64_t off,
		       uint8_t *handle)
{
	const struct tfs_vmm_drv *drv = tfs_vmm_drv();
	struct tfs_keeper_req req = { .op = TFS_KEEPER_ALLOC, .size = c->size,
				      .device = d->ordinal, .dst_id = head, .dst_off = off };
	struct tfs_keeper_rep rep;
	CUresult r;
	int rc, fd = -1;

	rc = tfs_keeper_call(&req, &rep, &fd);
	if (rc)
		return rc == -ENOMEM || rc == -ENOSPC ? -ENOSPC : rc == -EINVAL ? -EINVAL : -EIO;
	c->kid = rep.id;
	c->fd = fd;
	if (handle)
		memcpy(handle, rep.handle, TFS_IPC_HANDLE_SIZE);
	if (fd < 0 || memcmp(rep.handle, TFS_VMM_MAGIC, 8)) {
		tfs_log(LOG_ERR, "cuda: device %d: the keeper's allocation is not a VMM one",
			d->ordinal);
		return -EIO;        /* chunk_drop gives it back */
	}
	r = drv->MemImportFromShareableHandle(&c->h, (void *)(uintptr_t)fd,
					      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	if (r != CUDA_SUCCESS)
		return tfs_vmm_fail(r, "cuMemImportFromShareableHandle", d->ordinal);
	c->have_h = 1;
	return 0;
}

/* Chunk c of v (c->size), from the keeper or made here, counted in d->reserved against
 * d's cap (tfs_cuda_cap: --max-bytes for d, or for every device); not mapped. handle as
 * from_keeper's (made here: the handle's own). On error nothing is left counted, and c
 * holds what chunk_drop gives back. */
static int chunk_make(struct cdev *d, struct tfs_vmm *v, struct tfs_vmm_chunk *c,
		      uint8_t *handle)
{
	uint64_t cap = tfs_cuda_cap(d->be, d->ordinal);
	uint64_t before = atomic_fetch_add(&d->reserved, c->size);
	int rc;

	if (cap && before + c->size > cap) {
		rc = -ENOSPC;
	} else if (tfs_keeper_present()) {
		rc = from_keeper(d, c, v->n ? v->c[0].kid : 0, v->n ? v->size : 0, handle);
	} else {
		rc = tfs_vmm_create(d->ordinal, c->size, &c->h, &c->fd);
		if (rc == 0) {
			c->have_h = 1;
			if (handle)
				tfs_vmm_handle_make(handle, c->size, d->ordinal);
		}
	}
	if (rc < 0)
		atomic_fetch_sub(&d->reserved, c->size);
	return rc;
}

/* Maps chunk c at va, accessible to every device, or (own_only) to d alone. */
static int chunk_map_access(struct cdev *d, struct tfs_vmm_chunk *c, uint64_t va, int own_only)
{
	const struct tfs_vmm_drv *drv = tfs_vmm_drv();
	CUresult r;

	if ((r = drv->MemMap(va, c->size, 0, c->h, 0)) != CUDA_SUCCESS)
		return tfs_vmm_fail(r, "cuMemMap", d->ordinal);
	c->mapped = 1;
	return own_only ? set_access_own(drv, va, c->size, d->ordinal) :
	       set_access(drv, va, c->size, d->be->ndev, d->ordinal);
}

static int chunk_map(struct cdev *d, struct tfs_vmm_chunk *c, uint64_t va)
{
	return chunk_map_access(d, c, va, 0);
}

/* v's first n chunks, one after the other, at a new reservation of resv bytes, which
 * becomes v's (va, resv); the old one is unmapped and freed. On error v is as it was. */
static int map_all(struct cdev *d, struct tfs_vmm *v, int n, uint64_t resv, size_t gran)
{
	const struct tfs_vmm_drv *drv = tfs_vmm_drv();
	int was[TFS_VMM_CHUNKS_MAX];
	CUdeviceptr va = 0;
	uint64_t off = 0;
	CUresult r;
	int i, rc = 0;

	if ((r = drv->MemAddressReserve(&va, resv, gran, 0, 0)) != CUDA_SUCCESS)
		return tfs_vmm_fail(r, "cuMemAddressReserve", d->ordinal);
	for (i = 0; i < n && rc == 0; i++) {
		was[i] = v->c[i].mapped;
		v->c[i].mapped = 0;
		rc = chunk_map(d, &v->c[i], va + off);
		off += v->c[i].size;
	}
	if (rc < 0) {
		off = 0;
		for (int j = 0; j < i; j++) {
			if (v->c[j].mapped)
				drv->MemUnmap(va + off, v->c[j].size);
			v->c[j].mapped = was[j];
			off += v->c[j].size;
		}
		drv->MemAddressFree(va, resv);
		return rc;
	}
	if (v->va) {
		off = 0;
		for (i = 0; i < n; i++) {
			if (was[i] && (r = drv->MemUnmap(v->va + off, v->c[i].size)) != CUDA_SUCCESS)
				tfs_vmm_fail(r, "cuMemUnmap", d->ordinal);
			off += v->c[i].size;
		}
		if ((r = drv->MemAddressFree(v->va, v->resv)) != CUDA_SUCCESS)
			tfs_vmm_fail(r, "cuMemAddressFree", d->ordinal);
	}
	v->va = va;
	v->resv = resv;
	return 0;
}

/* A new zeroed allocation of at least bytes on d (current): 0 with *out, or -errno with
 * nothing left behind. */
static int vmm_create(struct cdev *d, uint64_t bytes, struct tfs_vmm **out)
{
	CUmemAllocationProp prop;
	struct tfs_vmm *v;
	size_t gran;
	int rc;

	if ((rc = tfs_vmm_prop(d->ordinal, &prop, &gran)) < 0)
		return rc;
	if (bytes > UINT64_MAX - gran)
		return -EINVAL;
	if (!(v = calloc(1, sizeof(*v))))
		return -ENOMEM;
	v->c[0].fd = -1;
	v->c[0].size = (bytes + gran - 1) / gran * gran;
	v->bytes = bytes;
	rc = chunk_make(d, v, &v->c[0], v->handle);
	v->n = 1;                   /* from here on vmm_destroy gives c[0] back */
	if (rc < 0) {
		vmm_destroy(v, d->ordinal);
		return rc;
	}
	v->size = v->c[0].size;
	if ((rc = map_all(d, v, 1, v->size, gran)) < 0)
		goto fail;
	/* cuMemCreate makes no promise about what the memory holds. */
	if ((rc = tfs_cuda_dev_copy_zero(d, 0, 0, 0, v->va, v->size)) < 0)
		goto fail;
	*out = v;
	return 0;
fail:
	vmm_drop(d, v);
	return rc;
}

/* Memory given back off its caller's path (tfs_cuda_vmm_free_later) may be what a full
 * device lacks, and so may the empty blocks of packed tensors that the pool keeps cached
 * (counted in d->reserved, shown free by statfs): 1 once both are back, for one more try.
 * Never under the pool's lock, which the zeroing thread and the trim take. */
static int freed_later(struct cdev *d)
{
	tfs_cuda_zero_drain(d);
	if (d->pool)
		tfs_pool_trim(d->pool);
	return 1;
}

/* A tensor's own allocation v comes (+1) or goes (-1) in d's statistics. */
static void own_count(struct cdev *d, const struct tfs_vmm *v, int sign)
{
	if (sign > 0) {
		atomic_fetch_add(&d->vmm_reserved, v->size);
		atomic_fetch_add(&d->vmm_used, v->bytes);
		atomic_fetch_add(&d->vmm_n, 1);
	} else {
		atomic_fetch_sub(&d->vmm_reserved, v->size);
		atomic_fetch_sub(&d->vmm_used, v->bytes);
		atomic_fetch_sub(&d->vmm_n, 1);
	}
}

int tfs_cuda_vmm_alloc(struct cdev *d, uint64_t bytes, struct tfs_alloc *a)
{
	int rc = tfs_cuda_dev_current(d);

	if (rc < 0)
		return rc;
	if ((rc = vmm_create(d, bytes, &a->vmm)) == -ENOSPC && freed_later(d))
		rc = vmm_create(d, bytes, &a->vmm);
	if (rc == 0)
		own_count(d, a->vmm, 1);
	return rc;
}

/* tfs_cuda_vmm_free_later's half on the zeroing thread (or the caller's, without memory
 * for the list: d is then made current). */
static void drop_later(struct cdev *d, void *arg)
{
	if (current_or_leak(d) == 0)
		vmm_drop(d, arg);
}

void tfs_cuda_vmm_free_later(struct tfs_alloc *a)
{
	struct cdev *d = a->dev;

	own_count(d, a->vmm, -1);
	tfs_cuda_later(d, drop_later, a->vmm);
	a->vmm = NULL;
}

/* Little-endian u64 at p (the handle's fields, meta.h). */
static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A move's new allocation is made in pieces, each copied while the next is made, so that
 * only the first piece's making (the keeper's cuMemCreate and export, the import, map and
 * access here: about 1-2 ms a GiB) comes before the copy. Each piece gets access for its
 * own device only, which the copy needs; access for every device comes once all are
 * queued, over the whole range, while the copies run: where the device holds no other
 * large mapping that other devices reach, the first such access costs about 9 ms (H200,
 * driver 580), and made piece by piece it stalled the copies (measured: 31 ms against 25
 * for 8 GiB; tests/bench/RESULTS-gpu.md). Pieces are chunks like growth's:
 * MOVE_PIECES_MAX leaves the rest of TFS_VMM_CHUNKS_MAX for growth in place after the
 * move. Below two MOVE_PIECE_MIN pieces one allocation is made first and then copied. */
#define MOVE_PIECE_MIN (256ull << 20)
#define MOVE_PIECES_MAX 8

static int move_pieces(struct cdev *to, struct cdev *from, const struct tfs_vmm *src,
		       struct tfs_vmm **out, double *first_ms)
{
	const struct tfs_vmm_drv *drv = tfs_vmm_drv();
	double t0 = tfs_cuda_now_ms();
	struct tfs_cuda_copyq q;
	CUmemAllocationProp prop;
	CUdeviceptr va = 0;
	uint64_t size, piece, off, len;
	struct tfs_vmm *v;
	size_t gran;
	CUresult r;
	int n, rc, qrc;

	*first_ms = 0;
	if ((rc = tfs_cuda_dev_current(to)) < 0)
		return rc;
	if ((rc = tfs_vmm_prop(to->ordinal, &prop, &gran)) < 0)
		return rc;
	if (src->bytes > (1ull << 48))
		return -EINVAL;
	size = (src->bytes + gran - 1) / gran * gran;
	n = (int)(size / (MOVE_PIECE_MIN > 4 * gran ? MOVE_PIECE_MIN : 4 * gran));
	n = n > MOVE_PIECES_MAX ? MOVE_PIECES_MAX : n;
	piece = n ? (size / (uint64_t)n + gran - 1) / gran * gran : 0;
	/* Every piece but the last full, the last holding some of the bytes. */
	if (n < 2 || piece * (uint64_t)(n - 1) >= src->bytes) {
		if ((rc = vmm_create(to, src->bytes, &v)) < 0)
			return rc;
		*first_ms = tfs_cuda_now_ms() - t0;
		rc = tfs_cuda_peer_copy(to, v->va, from, src->va, src->bytes);
		if (rc < 0) {
			vmm_drop(to, v);
			return rc;
		}
		own_count(to, v, 1);
		*out = v;
		return 0;
	}
	if (!(v = calloc(1, sizeof(*v))))
		return -ENOMEM;
	for (int i = 0; i < TFS_VMM_CHUNKS_MAX; i++)
		v->c[i].fd = -1;
	v->bytes = src->bytes;
	if ((r = drv->MemAddressReserve(&va, size, gran, 0, 0)) != CUDA_SUCCESS) {
		free(v);
		return tfs_vmm_fail(r, "cuMemAddressReserve", to->ordinal);
	}
	v->va = va;
	v->resv = size;
	tfs_cuda_copyq_begin(&q, to);
	for (off = 0; off < size; off += v->c[v->n - 1].size) {
		struct tfs_vmm_chunk *c = &v->c[v->n];

		c->size = v->n < n - 1 ? piece : size - off;
		if ((rc = chunk_make(to, v, c, v->n ? NULL : v->handle)) < 0) {
			chunk_drop(drv, c, 0, to->ordinal);
			break;
		}
		v->n++;                 /* from here on vmm_destroy gives c back */
		v->size += c->size;
		if ((rc = chunk_map_access(to, c, va + off, 1)) < 0) {
			atomic_fetch_sub(&to->reserved, c->size);
			v->size -= c->size;
			v->n--;
			chunk_drop(drv, c, va + off, to->ordinal);
			break;
		}
		if (off == 0)
			*first_ms = tfs_cuda_now_ms() - t0;
		len = off + c->size <= src->bytes ? c->size : src->bytes - off;
		tfs_cuda_copyq_peer(&q, va + off, from, src->va + off, len);
		if (q.e != cudaSuccess)
			break;          /* the rest would be made only to go: end says why */
	}
	/* What the copy leaves past the tensor's bytes reads as zeros, as after any create. */
	if (rc == 0)
		tfs_cuda_copyq_zero(&q, va + src->bytes, size - src->bytes);
	/* Every device's access while the copies run. */
	if (rc == 0 && to->be->ndev > 1)
		rc = set_access(drv, va, size, to->be->ndev, to->ordinal);
	qrc = tfs_cuda_copyq_end(&q, "move");
	rc = rc < 0 ? rc : qrc;
	if (rc < 0) {
		vmm_drop(to, v);
		return rc;
	}
	put_le64(v->handle + 16, v->size);
	own_count(to, v, 1);
	*out = v;
	return 0;
}

int tfs_cuda_vmm_move(struct cdev *to, struct cdev *from, const struct tfs_vmm *src,
		      struct tfs_vmm **out, double *first_ms)
{
	int rc = move_pieces(to, from, src, out, first_ms);

	if (rc == -ENOSPC && freed_later(to))
		rc = move_pieces(to, from, src, out, first_ms);
	return rc;
}

/* The keeper's allocations (chunks[0..n): descriptor, id, size each; the descriptors
 * stay the caller's) imported and mapped here one after the other, with handle, counted
 * in d->reserved: *out, or -errno with nothing kept. */
static int vmm_import(struct cdev *d, const struct tfs_vmm_part *parts, int n,
		      const uint8_t handle[TFS_IPC_HANDLE_SIZE], struct tfs_vmm **out)
{
	const struct tfs_vmm_drv *drv;
	CUmemAllocationProp prop;
	struct tfs_vmm *v;
	size_t gran;
	CUresult r;
	int rc, i;

	if ((rc = tfs_cuda_dev_current(d)) < 0 || (rc = tfs_vmm_prop(d->ordinal, &prop, &gran)) < 0)
		return rc;
	drv = tfs_vmm_drv();
	if (n < 1 || n > TFS_VMM_CHUNKS_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!parts[i].size || parts[i].size % gran || parts[i].size > (1ull << 48))
			return -EINVAL;
	if (!(v = calloc(1, sizeof(*v))))
		return -ENOMEM;
	memcpy(v->handle, handle, TFS_IPC_HANDLE_SIZE);
	for (i = 0; i < n; i++) {
		struct tfs_vmm_chunk *c = &v->c[i];

		c->size = parts[i].size;
		v->n = i + 1;
		if ((c->fd = fcntl(parts[i].fd, F_DUPFD_CLOEXEC, 3)) < 0) {
			rc = -errno;
			goto fail;
		}
		r = drv->MemImportFromShareableHandle(&c->h, (void *)(uintptr_t)c->fd,
						      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
		if (r != CUDA_SUCCESS) {
			rc = tfs_vmm_fail(r, "cuMemImportFromShareableHandle", d->ordinal);
			goto fail;
		}
		c->have_h = 1;
		v->size += c->size;
	}
	if ((rc = map_all(d, v, n, v->size, gran)) < 0)
		goto fail;
	/* Only now: a failed adoption leaves them to adopt_end. */
	for (i = 0; i < n; i++)
		v->c[i].kid = parts[i].kid;
	atomic_fetch_add(&d->reserved, v->size);
	*out = v;
	return 0;
fail:
	vmm_destroy(v, d->ordinal);
	return rc;
}

int tfs_cuda_vmm_adopt(struct cdev *d, const struct tfs_vmm_part *parts, int n,
		       const struct tfs_meta *m, struct tfs_alloc *a)
{
	int rc;

	if (m->ipc_offset)
		return -EINVAL;
	if ((rc = vmm_import(d, parts, n, m->ipc_handle, &a->vmm)) < 0)
		return rc;
	if (m->bytes > a->vmm->size) {
		for (int i = 0; i < a->vmm->n; i++)
			a->vmm->c[i].kid = 0;       /* the keeper's still: adopt_end frees them */
		vmm_drop(d, a->vmm);
		a->vmm = NULL;
		return -EINVAL;
	}
	a->vmm->bytes = m->bytes;
	own_count(d, a->vmm, 1);
	return 0;
}

/* ---- a restart: the keeper's inventory (alloc.c's adoption) ---- */

int tfs_cuda_found_names(const struct kfound *f, const struct tfs_meta *m)
{
	const uint8_t *h = (const uint8_t *)&f->handle;
	uint64_t head, off;

	if (f->device != m->device)
		return 0;
	if (f->vfd < 0 || memcmp(h, TFS_VMM_MAGIC, 8))
		return memcmp(h, m->ipc_handle, sizeof(f->handle)) == 0;
	return !tfs_keeper_link_get(h, &head, &off) && !memcmp(h, m->ipc_handle, 16) &&
	       !memcmp(h + 24, m->ipc_handle + 24, TFS_IPC_HANDLE_SIZE - 24);
}

int tfs_cuda_vmm_found_chunks(struct tfs_backend *be, struct kfound *f,
			      struct tfs_vmm_part *parts, struct kfound **which)
{
	uint64_t end = f->size;
	int n = 1;

	parts[0] = (struct tfs_vmm_part){ .fd = f->vfd, .kid = f->id, .size = f->size };
	which[0] = f;
	while (n < TFS_VMM_CHUNKS_MAX) {
		struct kfound *g = NULL;

		for (size_t i = 0; i < be->nfound && !g; i++) {
			struct kfound *c = &be->found[i];
			uint64_t head, off;

			if (c->vfd >= 0 && !c->used && c->device == f->device &&
			    tfs_keeper_link_get((const uint8_t *)&c->handle, &head, &off) &&
			    head == f->id && off == end)
				g = c;
		}
		if (!g || g->size > UINT64_MAX - end)
			break;
		parts[n] = (struct tfs_vmm_part){ .fd = g->vfd, .kid = g->id, .size = g->size };
		which[n++] = g;
		end += g->size;
	}
	return n;
}

int tfs_cuda_vmm_block_adopt(struct cdev *d, int fd, uint64_t kid, uint64_t size,
			     const uint8_t handle[TFS_IPC_HANDLE_SIZE], struct tfs_vmm **out)
{
	struct tfs_vmm_part p = { .fd = fd, .kid = kid, .size = size };

	return vmm_import(d, &p, 1, handle, out);
}

int tfs_cuda_vmm_block_get(struct cdev *d, uint64_t size, struct tfs_vmm **out)
{
	return vmm_create(d, size, out);
}

void tfs_cuda_vmm_block_put(struct cdev *d, struct tfs_vmm *v)
{
	vmm_drop(d, v);
}

void tfs_cuda_vmm_free(struct tfs_alloc *a)
{
	struct cdev *d = a->dev;

	if (current_or_leak(d) < 0)
		return;
	own_count(d, a->vmm, -1);
	vmm_drop(d, a->vmm);
	a->vmm = NULL;
}

/* Growth in place past v's chunks (docs/vmm.md#growth): one more chunk for the tail,
 * mapped at v's end, in a larger reservation when v's is full (v->va moves; every other
 * process maps the chunks at its own address and is not touched). The bytes past the old
 * end read as zeros. The handle keeps the first chunk's id and says the new size, so that
 * a process that mapped the shorter tensor tells the two apart. 0 or -errno with v as it
 * was. */
static int grow(struct cdev *d, struct tfs_vmm *v, uint64_t new_bytes)
{
	struct tfs_vmm_chunk *c = &v->c[v->n];
	CUmemAllocationProp prop;
	uint64_t need, resv;
	size_t gran;
	int rc;

	if ((rc = tfs_vmm_prop(d->ordinal, &prop, &gran)) < 0)
		return rc;
	need = new_bytes - v->size;
	if (need > UINT64_MAX - gran || new_bytes > (1ull << 48))
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->size = (need + gran - 1) / gran * gran;
	if ((rc = chunk_make(d, v, c, NULL)) < 0)
		goto drop;
	if (v->size + c->size <= v->resv) {
		rc = chunk_map(d, c, v->va + v->size);
	} else {
		/* Twice the size, so that further growth mostly maps into room it has. */
		resv = v->size + c->size;
		resv = resv <= (1ull << 47) ? 2 * resv : resv;
		rc = map_all(d, v, v->n + 1, resv, gran);
	}
	if (rc == 0)
		rc = tfs_cuda_dev_copy_zero(d, 0, 0, 0, v->va + v->bytes, new_bytes - v->bytes);
	if (rc < 0) {
		atomic_fetch_sub(&d->reserved, c->size);
		goto drop;
	}
	v->n++;
	v->size += c->size;
	atomic_fetch_add(&d->vmm_reserved, c->size);
	atomic_fetch_add(&d->vmm_used, new_bytes);
	atomic_fetch_sub(&d->vmm_used, v->bytes);
	v->bytes = new_bytes;
	put_le64(v->handle + 16, v->size);
	return 0;
drop:
	chunk_drop(tfs_vmm_drv(), c, v->va + v->size, d->ordinal);
	return rc;
}

int tfs_cuda_vmm_resize(struct tfs_alloc *a, uint64_t new_bytes)
{
	struct cdev *d = a->dev;
	struct tfs_vmm *v = a->vmm, *nv;
	int rc;

	if ((rc = tfs_cuda_dev_current(d)) < 0)
		return rc;
	if (new_bytes <= v->size) {
		/* Within the allocation (its size is the granularity's multiple): in place.
		 * What a shrink leaves past the new end is zeroed, so that growing again reads
		 * zeros (the backend's contract); past the old end it is zero already, unless
		 * a holder wrote there, hence the zeroing on growth too. */
		if (new_bytes < v->bytes)
			rc = tfs_cuda_dev_copy_zero(d, 0, 0, 0, v->va + new_bytes,
						    v->bytes - new_bytes);
		else if (new_bytes > v->bytes)
			rc = tfs_cuda_dev_copy_zero(d, 0, 0, 0, v->va + v->bytes,
						    new_bytes - v->bytes);
		if (rc == 0) {
			atomic_fetch_add(&d->vmm_used, new_bytes);
			atomic_fetch_sub(&d->vmm_used, v->bytes);
			v->bytes = new_bytes;
		}
		return rc;
	}
	if (v->n < TFS_VMM_CHUNKS_MAX) {
		if ((rc = grow(d, v, new_bytes)) == -ENOSPC && freed_later(d))
			rc = grow(d, v, new_bytes);
		return rc;
	}
	/* As many chunks as a tensor may have: a new allocation takes the bytes. */
	if ((rc = vmm_create(d, new_bytes, &nv)) == -ENOSPC && freed_later(d))
		rc = vmm_create(d, new_bytes, &nv);
	if (rc < 0)
		return rc;
	if ((rc = tfs_cuda_dev_copy_zero(d, nv->va, v->va, v->bytes, 0, 0)) < 0) {
		vmm_drop(d, nv);
		return rc;
	}
	tfs_cuda_vmm_free(a);
	a->vmm = nv;
	own_count(d, nv, 1);
	return 0;
}

void tfs_cuda_vmm_handle(const struct tfs_alloc *a, uint8_t handle[TFS_IPC_HANDLE_SIZE])
{
	memcpy(handle, a->vmm->handle, TFS_IPC_HANDLE_SIZE);
}

int tfs_cuda_vmm_grows_in_place(struct tfs_backend *be, struct tfs_alloc *a, uint64_t new_bytes)
{
	(void)be;
	return a && a->vmm && new_bytes > a->vmm->bytes &&
	       (new_bytes <= a->vmm->size || a->vmm->n < TFS_VMM_CHUNKS_MAX);
}

/* The VMM memory of a: its own, or its block's (packed). */
static struct tfs_vmm *vmm_of(struct tfs_alloc *a)
{
	struct cblock *cb = a && !a->vmm && a->chunk ? tfs_pool_chunk_cookie(a->chunk) : NULL;

	return a ? (a->vmm ? a->vmm : cb ? cb->vmm : NULL) : NULL;
}

int tfs_cuda_vmm_export_fd(struct tfs_backend *be, struct tfs_alloc *a, int writable, int *fd)
{
	struct tfs_vmm *v = vmm_of(a);
	int nfd;

	(void)be;
	(void)writable;     /* an allocation's descriptor cannot be made read-only */
	if (!v)
		return -ENOTSUP;      /* legacy IPC memory has no descriptor */
	nfd = fcntl(v->c[0].fd, F_DUPFD_CLOEXEC, 3);
	if (nfd < 0)
		return -errno;
	*fd = nfd;
	return 0;
}

int tfs_cuda_vmm_export_chunks(struct tfs_backend *be, struct tfs_alloc *a, int writable,
			       int *fds, uint64_t *sizes, int max)
{
	struct tfs_vmm *v = vmm_of(a);
	int i, rc;

	(void)be;
	(void)writable;
	if (!v)
		return -ENOTSUP;
	if (v->n > max)
		return -E2BIG;
	for (i = 0; i < v->n; i++) {
		if ((fds[i] = fcntl(v->c[i].fd, F_DUPFD_CLOEXEC, 3)) < 0) {
			rc = -errno;
			while (i-- > 0)
				close(fds[i]);
			return rc;
		}
		sizes[i] = v->c[i].size;
	}
	return v->n;
}
