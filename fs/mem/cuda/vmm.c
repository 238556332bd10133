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

/* Undoes whatever of v was done, gives the keeper's allocation back, frees v. */
static void vmm_destroy(struct tfs_vmm *v, int ordinal)
{
	const struct tfs_vmm_drv *drv = tfs_vmm_drv();
	CUresult r;

	if (drv && v->va) {
		if (v->mapped && (r = drv->MemUnmap(v->va, v->size)) != CUDA_SUCCESS)
			tfs_vmm_fail(r, "cuMemUnmap", ordinal);
		if ((r = drv->MemAddressFree(v->va, v->size)) != CUDA_SUCCESS)
			tfs_vmm_fail(r, "cuMemAddressFree", ordinal);
	}
	if (drv && v->have_h && (r = drv->MemRelease(v->h)) != CUDA_SUCCESS)
		tfs_vmm_fail(r, "cuMemRelease", ordinal);
	if (v->fd >= 0)
		close(v->fd);
	if (v->kid) {
		struct tfs_keeper_req req = { .op = TFS_KEEPER_FREE, .id = v->kid };
		struct tfs_keeper_rep rep;

		if (tfs_keeper_call(&req, &rep, NULL))
			tfs_log(LOG_WARNING, "cuda: device %d: the keeper did not free a VMM "
				"allocation", ordinal);
	}
	free(v);
}

/* v's allocation from the keeper: v->fd, v->kid, v->handle, v->h imported. */
static int from_keeper(struct cdev *d, struct tfs_vmm *v)
{
	const struct tfs_vmm_drv *drv = tfs_vmm_drv();
	struct tfs_keeper_req req = { .op = TFS_KEEPER_ALLOC, .size = v->size,
				      .device = d->ordinal };
	struct tfs_keeper_rep rep;
	CUresult r;
	int rc, fd = -1;

	rc = tfs_keeper_call(&req, &rep, &fd);
	if (rc)
		return rc == -ENOMEM || rc == -ENOSPC ? -ENOSPC : rc == -EINVAL ? -EINVAL : -EIO;
	v->kid = rep.id;
	v->fd = fd;
	memcpy(v->handle, rep.handle, TFS_IPC_HANDLE_SIZE);
	if (fd < 0 || memcmp(rep.handle, TFS_VMM_MAGIC, 8)) {
		tfs_log(LOG_ERR, "cuda: device %d: the keeper's allocation is not a VMM one",
			d->ordinal);
		return -EIO;        /* vmm_destroy gives it back */
	}
	r = drv->MemImportFromShareableHandle(&v->h, (void *)(uintptr_t)fd,
					      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	if (r != CUDA_SUCCESS)
		return tfs_vmm_fail(r, "cuMemImportFromShareableHandle", d->ordinal);
	v->have_h = 1;
	return 0;
}

/* Maps v->h (size v->size) at an address reserved here, accessible to every device. */
static int map_here(struct cdev *d, struct tfs_vmm *v, size_t gran)
{
	const struct tfs_vmm_drv *drv = tfs_vmm_drv();
	CUdeviceptr va = 0;
	CUresult r;

	if ((r = drv->MemAddressReserve(&va, v->size, gran, 0, 0)) != CUDA_SUCCESS)
		return tfs_vmm_fail(r, "cuMemAddressReserve", d->ordinal);
	v->va = va;
	if ((r = drv->MemMap(va, v->size, 0, v->h, 0)) != CUDA_SUCCESS)
		return tfs_vmm_fail(r, "cuMemMap", d->ordinal);
	v->mapped = 1;
	return set_access(drv, va, v->size, d->be->ndev, d->ordinal);
}

/* A new zeroed allocation of at least bytes on d (current): 0 with *out, or -errno with
 * nothing left behind. */
static int vmm_create(struct cdev *d, uint64_t bytes, struct tfs_vmm **out)
{
	struct tfs_backend *be = d->be;
	CUmemAllocationProp prop;
	struct tfs_vmm *v;
	size_t gran;
	uint64_t before;
	int rc;

	if ((rc = tfs_vmm_prop(d->ordinal, &prop, &gran)) < 0)
		return rc;
	if (bytes > UINT64_MAX - gran)
		return -EINVAL;
	if (!(v = calloc(1, sizeof(*v))))
		return -ENOMEM;
	v->fd = -1;
	v->size = (bytes + gran - 1) / gran * gran;
	v->bytes = bytes;
	before = atomic_fetch_add(&d->reserved, v->size);
	if (be->cap && before + v->size > be->cap) {
		rc = -ENOSPC;
		goto fail;
	}
	if (tfs_keeper_present()) {
		rc = from_keeper(d, v);
	} else {
		rc = tfs_vmm_create(d->ordinal, v->size, &v->h, &v->fd);
		if (rc == 0) {
			v->have_h = 1;
			tfs_vmm_handle_make(v->handle, v->size, d->ordinal);
		}
	}
	if (rc < 0 || (rc = map_here(d, v, gran)) < 0)
		goto fail;
	/* cuMemCreate makes no promise about what the memory holds. */
	if ((rc = tfs_cuda_dev_copy_zero(d, 0, 0, 0, v->va, v->size)) < 0)
		goto fail;
	*out = v;
	return 0;
fail:
	atomic_fetch_sub(&d->reserved, v->size);
	vmm_destroy(v, d->ordinal);
	return rc;
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
	if ((rc = vmm_create(d, bytes, &a->vmm)) == 0)
		own_count(d, a->vmm, 1);
	return rc;
}

/* The keeper's allocation kid of size (descriptor fd, the caller's) imported and mapped
 * here, with handle, counted in d->reserved: *out, or -errno with nothing kept. */
static int vmm_import(struct cdev *d, int fd, uint64_t kid, uint64_t size,
		      const uint8_t handle[TFS_IPC_HANDLE_SIZE], struct tfs_vmm **out)
{
	const struct tfs_vmm_drv *drv;
	CUmemAllocationProp prop;
	struct tfs_vmm *v;
	size_t gran;
	CUresult r;
	int rc;

	if ((rc = tfs_cuda_dev_current(d)) < 0 || (rc = tfs_vmm_prop(d->ordinal, &prop, &gran)) < 0)
		return rc;
	drv = tfs_vmm_drv();
	if (!size || size % gran)
		return -EINVAL;
	if (!(v = calloc(1, sizeof(*v))))
		return -ENOMEM;
	v->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (v->fd < 0) {
		rc = -errno;
		free(v);
		return rc;
	}
	v->size = size;
	memcpy(v->handle, handle, TFS_IPC_HANDLE_SIZE);
	r = drv->MemImportFromShareableHandle(&v->h, (void *)(uintptr_t)v->fd,
					      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	if (r != CUDA_SUCCESS) {
		rc = tfs_vmm_fail(r, "cuMemImportFromShareableHandle", d->ordinal);
		goto fail;
	}
	v->have_h = 1;
	if ((rc = map_here(d, v, gran)) < 0)
		goto fail;
	v->kid = kid;       /* only now: a failed adoption leaves it to adopt_end */
	atomic_fetch_add(&d->reserved, v->size);
	*out = v;
	return 0;
fail:
	vmm_destroy(v, d->ordinal);
	return rc;
}

int tfs_cuda_vmm_adopt(struct cdev *d, int fd, uint64_t kid, uint64_t size,
		       const struct tfs_meta *m, struct tfs_alloc *a)
{
	int rc;

	if (m->bytes > size || m->ipc_offset)
		return -EINVAL;
	if ((rc = vmm_import(d, fd, kid, size, m->ipc_handle, &a->vmm)) < 0)
		return rc;
	a->vmm->bytes = m->bytes;
	own_count(d, a->vmm, 1);
	return 0;
}

int tfs_cuda_vmm_block_adopt(struct cdev *d, int fd, uint64_t kid, uint64_t size,
			     const uint8_t handle[TFS_IPC_HANDLE_SIZE], struct tfs_vmm **out)
{
	return vmm_import(d, fd, kid, size, handle, out);
}

int tfs_cuda_vmm_block_get(struct cdev *d, uint64_t size, struct tfs_vmm **out)
{
	return vmm_create(d, size, out);
}

void tfs_cuda_vmm_block_put(struct cdev *d, struct tfs_vmm *v)
{
	uint64_t size = v->size;

	vmm_destroy(v, d->ordinal);
	atomic_fetch_sub(&d->reserved, size);
}

void tfs_cuda_vmm_free(struct tfs_alloc *a)
{
	struct cdev *d = a->dev;
	struct tfs_vmm *v = a->vmm;
	uint64_t size = v->size;

	if (tfs_cuda_dev_current(d) < 0) {
		/* Without the context the mapping cannot go: leak it rather than crash. */
		tfs_log(LOG_ERR, "cuda: device %d: leaking a VMM allocation", d->ordinal);
		return;
	}
	own_count(d, v, -1);
	vmm_destroy(v, d->ordinal);
	a->vmm = NULL;
	atomic_fetch_sub(&d->reserved, size);
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
	if ((rc = vmm_create(d, new_bytes, &nv)) < 0)
		return rc;
	if ((rc = tfs_cuda_dev_copy_zero(d, nv->va, v->va, v->bytes, 0, 0)) < 0) {
		uint64_t size = nv->size;

		vmm_destroy(nv, d->ordinal);
		atomic_fetch_sub(&d->reserved, size);
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
	return a && a->vmm && new_bytes > a->vmm->bytes && new_bytes <= a->vmm->size;
}

int tfs_cuda_vmm_export_fd(struct tfs_backend *be, struct tfs_alloc *a, int writable, int *fd)
{
	struct cblock *cb = a && !a->vmm && a->chunk ? tfs_pool_chunk_cookie(a->chunk) : NULL;
	struct tfs_vmm *v = a ? (a->vmm ? a->vmm : cb ? cb->vmm : NULL) : NULL;
	int nfd;

	(void)be;
	(void)writable;     /* an allocation's descriptor cannot be made read-only */
	if (!v)
		return -ENOTSUP;      /* legacy IPC memory has no descriptor */
	nfd = fcntl(v->fd, F_DUPFD_CLOEXEC, 3);
	if (nfd < 0)
		return -errno;
	*fd = nfd;
	return 0;
}
