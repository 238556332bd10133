/* --memory vmm (docs/vmm.md): each tensor its own allocation through the CUDA virtual
 * memory management API, exported as a POSIX file descriptor that the handle socket hands
 * to processes the mount lets read the tensor. The allocation is cuMemCreate'd on the
 * tensor's device, its size rounded up to the device's granularity, mapped at an address
 * this daemon reserves and made accessible to every device, so the copies of copy.c and
 * host_tier.c treat it as any device pointer. The daemon keeps the exported descriptor
 * for as long as the tensor lives; the driver frees the memory once the last descriptor,
 * handle and mapping of it (here and in every importer) is gone.
 *
 * The driver API comes from libcuda by dlopen (the daemon links only the runtime, whose
 * context, made current by tfs_cuda_dev_current, the driver calls use). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "mem/cuda/cuda_internal.h"
#include "log.h"
#include "meta.h"          /* TFS_VMM_MAGIC */

static struct {
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*GetErrorString)(CUresult, const char **);
	CUresult (*MemGetAllocationGranularity)(size_t *, const CUmemAllocationProp *,
						CUmemAllocationGranularity_flags);
	CUresult (*MemCreate)(CUmemGenericAllocationHandle *, size_t,
			      const CUmemAllocationProp *, unsigned long long);
	CUresult (*MemRelease)(CUmemGenericAllocationHandle);
	CUresult (*MemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
				      unsigned long long);
	CUresult (*MemAddressFree)(CUdeviceptr, size_t);
	CUresult (*MemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
			   unsigned long long);
	CUresult (*MemUnmap)(CUdeviceptr, size_t);
	CUresult (*MemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
	CUresult (*MemExportToShareableHandle)(void *, CUmemGenericAllocationHandle,
					       CUmemAllocationHandleType, unsigned long long);
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static int drv_rc = -ENOSYS;
static _Atomic uint64_t next_id;

static void drv_load(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		tfs_log(LOG_ERR, "cuda: --memory vmm: no libcuda.so.1: %s", dlerror());
		return;
	}
#define SYM(f) if (!(*(void **)&drv.f = dlsym(lib, "cu" #f))) goto missing
	SYM(DeviceGet); SYM(GetErrorString); SYM(MemGetAllocationGranularity); SYM(MemCreate);
	SYM(MemRelease); SYM(MemAddressReserve); SYM(MemAddressFree); SYM(MemMap);
	SYM(MemUnmap); SYM(MemSetAccess); SYM(MemExportToShareableHandle);
#undef SYM
	drv_rc = 0;
	/* The library stays loaded: the pointers are used until the daemon exits. */
	return;
missing:
	tfs_log(LOG_ERR, "cuda: --memory vmm: libcuda lacks the VMM API");
	dlclose(lib);
}

static int drv_get(void)
{
	pthread_once(&drv_once, drv_load);
	return drv_rc;
}

/* Logs a failed driver call and returns it as a negative errno. */
static int fail(CUresult r, const char *what, int device)
{
	const char *s = NULL;

	if (drv.GetErrorString)
		drv.GetErrorString(r, &s);
	tfs_log(r == CUDA_ERROR_OUT_OF_MEMORY ? LOG_INFO : LOG_ERR, "cuda: device %d: %s: %s",
		device, what, s ? s : "unknown error");
	return r == CUDA_ERROR_OUT_OF_MEMORY ? -ENOSPC :
	       r == CUDA_ERROR_INVALID_DEVICE ? -EINVAL : -EIO;
}

static void prop_of(CUmemAllocationProp *p, CUdevice dev)
{
	memset(p, 0, sizeof(*p));
	p->type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p->location.id = dev;
	p->requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
}

/* Read-write access for every device of the machine (so that any GPU's kernels and this
 * daemon's copies reach it), or, where the driver refuses that (no peer access between
 * some pair), for the allocation's own device only. */
static int set_access(CUdeviceptr va, size_t size, int ndev, int own)
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
	r = drv.MemSetAccess(va, size, d, (size_t)ndev);
	if (r != CUDA_SUCCESS && ndev > 1) {
		tfs_log(LOG_INFO, "cuda: device %d: VMM access for all %d devices refused; "
			"own device only", own, ndev);
		d[0].location.id = own;
		r = drv.MemSetAccess(va, size, d, 1);
	}
	free(d);
	return r == CUDA_SUCCESS ? 0 : fail(r, "cuMemSetAccess", own);
}

static void vmm_destroy(struct tfs_vmm *v, int ordinal)
{
	CUresult r;

	if (v->va) {
		if ((r = drv.MemUnmap(v->va, v->size)) != CUDA_SUCCESS)
			fail(r, "cuMemUnmap", ordinal);
		if ((r = drv.MemAddressFree(v->va, v->size)) != CUDA_SUCCESS)
			fail(r, "cuMemAddressFree", ordinal);
	}
	if (v->have_h && (r = drv.MemRelease(v->h)) != CUDA_SUCCESS)
		fail(r, "cuMemRelease", ordinal);
	if (v->fd >= 0)
		close(v->fd);
	free(v);
}

/* A new zeroed allocation of at least bytes on d (current): 0 with *out, or -errno with
 * nothing left behind. */
static int vmm_create(struct cdev *d, uint64_t bytes, struct tfs_vmm **out)
{
	struct tfs_backend *be = d->be;
	CUmemAllocationProp prop;
	struct tfs_vmm *v;
	size_t gran = 0;
	CUdevice dev;
	CUdeviceptr va = 0;
	CUresult r;
	uint64_t before;
	int rc, fd = -1;

	if ((rc = drv_get()) < 0)
		return rc;
	if ((r = drv.DeviceGet(&dev, d->ordinal)) != CUDA_SUCCESS)
		return fail(r, "cuDeviceGet", d->ordinal);
	prop_of(&prop, dev);
	r = drv.MemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	if (r != CUDA_SUCCESS)
		return fail(r, "cuMemGetAllocationGranularity", d->ordinal);
	if (!gran || bytes > UINT64_MAX - gran)
		return -EINVAL;
	if (!(v = calloc(1, sizeof(*v))))
		return -ENOMEM;
	v->fd = -1;
	v->size = (bytes + gran - 1) / gran * gran;
	v->bytes = bytes;
	before = atomic_fetch_add(&d->reserved, v->size);
	if (be->cap && before + v->size > be->cap) {
		rc = -ENOSPC;
		goto fail_count;
	}
	if ((r = drv.MemCreate(&v->h, v->size, &prop, 0)) != CUDA_SUCCESS) {
		rc = fail(r, "cuMemCreate", d->ordinal);
		goto fail_count;
	}
	v->have_h = 1;
	if ((r = drv.MemAddressReserve(&va, v->size, gran, 0, 0)) != CUDA_SUCCESS) {
		rc = fail(r, "cuMemAddressReserve", d->ordinal);
		goto fail_count;
	}
	v->va = va;
	if ((r = drv.MemMap(v->va, v->size, 0, v->h, 0)) != CUDA_SUCCESS) {
		drv.MemAddressFree(v->va, v->size);
		v->va = 0;
		rc = fail(r, "cuMemMap", d->ordinal);
		goto fail_count;
	}
	if ((rc = set_access(v->va, v->size, be->ndev, d->ordinal)) < 0)
		goto fail_count;
	r = drv.MemExportToShareableHandle(&fd, v->h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
	if (r != CUDA_SUCCESS || fd < 0) {
		rc = r != CUDA_SUCCESS ? fail(r, "cuMemExportToShareableHandle", d->ordinal) : -EIO;
		goto fail_count;
	}
	/* The driver's descriptor may lack close-on-exec; the daemon starts children. */
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		rc = -errno;
		close(fd);
		goto fail_count;
	}
	v->fd = fd;
	/* cuMemCreate makes no promise about what the memory holds. */
	if ((rc = tfs_cuda_dev_copy_zero(d, 0, 0, 0, v->va, v->size)) < 0)
		goto fail_count;
	v->id = ((uint64_t)getpid() << 32) ^ (atomic_fetch_add(&next_id, 1) + 1);
	*out = v;
	return 0;
fail_count:
	atomic_fetch_sub(&d->reserved, v->size);
	vmm_destroy(v, d->ordinal);
	return rc;
}

int tfs_cuda_vmm_alloc(struct cdev *d, uint64_t bytes, struct tfs_alloc *a)
{
	int rc = tfs_cuda_dev_current(d);

	if (rc < 0)
		return rc;
	return vmm_create(d, bytes, &a->vmm);
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
	vmm_destroy(v, d->ordinal);
	a->vmm = NULL;
	atomic_fetch_sub(&d->reserved, size);
}

int tfs_cuda_vmm_resize(struct tfs_alloc *a, uint64_t new_bytes)
{
	struct cdev *d = a->dev;
	struct tfs_vmm *v = a->vmm, *nv;
	uint64_t keep;
	int rc;

	if ((rc = tfs_cuda_dev_current(d)) < 0)
		return rc;
	if (new_bytes <= v->size) {
		/* Within the allocation: what a shrink leaves past the new end is zeroed, so
		 * that growing again reads zeros (the backend's contract). */
		if (new_bytes < v->bytes &&
		    (rc = tfs_cuda_dev_copy_zero(d, 0, 0, 0, v->va + new_bytes,
						 v->bytes - new_bytes)) < 0)
			return rc;
		v->bytes = new_bytes;
		return 0;
	}
	if ((rc = vmm_create(d, new_bytes, &nv)) < 0)
		return rc;
	keep = v->bytes;
	if ((rc = tfs_cuda_dev_copy_zero(d, nv->va, v->va, keep, 0, 0)) < 0) {
		uint64_t size = nv->size;

		vmm_destroy(nv, d->ordinal);
		atomic_fetch_sub(&d->reserved, size);
		return rc;
	}
	tfs_cuda_vmm_free(a);
	a->vmm = nv;
	return 0;
}

void tfs_cuda_vmm_handle(const struct tfs_alloc *a, uint8_t handle[TFS_IPC_HANDLE_SIZE])
{
	uint64_t w[3] = { a->vmm->id, a->vmm->size, (uint64_t)a->dev->ordinal };
	int i, j;

	memset(handle, 0, TFS_IPC_HANDLE_SIZE);
	memcpy(handle, TFS_VMM_MAGIC, 8);
	for (i = 0; i < 3; i++)
		for (j = 0; j < 8; j++)
			handle[8 + 8 * i + j] = (uint8_t)(w[i] >> (8 * j));
}

int tfs_cuda_vmm_export_fd(struct tfs_backend *be, struct tfs_alloc *a, int writable, int *fd)
{
	int nfd;

	(void)be;
	(void)writable;     /* an allocation's descriptor cannot be made read-only */
	if (!a || !a->vmm)
		return -ENOTSUP;      /* legacy IPC memory has no descriptor */
	nfd = fcntl(a->vmm->fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0)
		return -errno;
	*fd = nfd;
	return 0;
}
