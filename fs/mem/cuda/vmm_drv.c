/* The driver's VMM calls (vmm_drv.h). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "mem/cuda/vmm_drv.h"
#include "log.h"
#include "meta.h"          /* TFS_VMM_MAGIC */

static struct tfs_vmm_drv drv;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static _Atomic uint64_t next_id;
static pthread_once_t id_once = PTHREAD_ONCE_INIT;

/* Ids start at a random point: a handle outlives the daemon that made it (adopted after a
 * restart, mapped in holders), and a process that maps one tells a grown tensor from
 * another by its id alone (libtensorfs's ipc_cache.c), so a later daemon's ids must not
 * meet an earlier one's, as a reused pid and a counter from 1 could. */
static void id_seed(void)
{
	uint64_t b;
	struct timespec ts;

	if (getrandom(&b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b)) {
		clock_gettime(CLOCK_REALTIME, &ts);
		b = (uint64_t)ts.tv_sec << 20 ^ (uint64_t)ts.tv_nsec;   /* the pid: handle_make */
	}
	atomic_store(&next_id, b);
}

static void load(void)
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
	SYM(MemImportFromShareableHandle);
#undef SYM
	loaded = 1;
	return;         /* the library stays: its calls are used until the process exits */
missing:
	tfs_log(LOG_ERR, "cuda: --memory vmm: libcuda lacks the VMM API");
	memset(&drv, 0, sizeof(drv));
	dlclose(lib);
}

const struct tfs_vmm_drv *tfs_vmm_drv(void)
{
	pthread_once(&once, load);
	return loaded ? &drv : NULL;
}

int tfs_vmm_fail(CUresult r, const char *what, int device)
{
	const char *s = NULL;

	if (drv.GetErrorString)
		drv.GetErrorString(r, &s);
	tfs_log(r == CUDA_ERROR_OUT_OF_MEMORY ? LOG_INFO : LOG_ERR, "cuda: device %d: %s: %s",
		device, what, s ? s : "unknown error");
	return r == CUDA_ERROR_OUT_OF_MEMORY ? -ENOSPC :
	       r == CUDA_ERROR_INVALID_DEVICE ? -EINVAL : -EIO;
}

int tfs_vmm_prop(int ordinal, CUmemAllocationProp *prop, size_t *gran)
{
	const struct tfs_vmm_drv *d = tfs_vmm_drv();
	CUdevice dev;
	CUresult r;

	if (!d)
		return -ENOSYS;
	if ((r = d->DeviceGet(&dev, ordinal)) != CUDA_SUCCESS)
		return tfs_vmm_fail(r, "cuDeviceGet", ordinal);
	memset(prop, 0, sizeof(*prop));
	prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop->location.id = dev;
	prop->requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	*gran = 0;
	r = d->MemGetAllocationGranularity(gran, prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	if (r != CUDA_SUCCESS)
		return tfs_vmm_fail(r, "cuMemGetAllocationGranularity", ordinal);
	return *gran ? 0 : -EIO;
}

int tfs_vmm_create(int ordinal, uint64_t size, CUmemGenericAllocationHandle *h, int *fd)
{
	const struct tfs_vmm_drv *d = tfs_vmm_drv();
	CUmemAllocationProp prop;
	size_t gran;
	CUresult r;
	int rc, nfd = -1;

	if ((rc = tfs_vmm_prop(ordinal, &prop, &gran)) < 0)
		return rc;
	if (!size || size % gran)
		return -EINVAL;
	if ((r = d->MemCreate(h, (size_t)size, &prop, 0)) != CUDA_SUCCESS)
		return tfs_vmm_fail(r, "cuMemCreate", ordinal);
	r = d->MemExportToShareableHandle(&nfd, *h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
	if (r != CUDA_SUCCESS || nfd < 0) {
		rc = r != CUDA_SUCCESS ? tfs_vmm_fail(r, "cuMemExportToShareableHandle", ordinal) :
		     -EIO;
		goto fail;
	}
	/* The driver's descriptor may lack close-on-exec; the daemon and keeper start
	 * children. */
	if (fcntl(nfd, F_SETFD, FD_CLOEXEC) < 0) {
		rc = -errno;
		close(nfd);
		goto fail;
	}
	*fd = nfd;
	return 0;
fail:
	d->MemRelease(*h);
	return rc;
}

void tfs_vmm_handle_make(uint8_t handle[TFS_IPC_HANDLE_SIZE], uint64_t size, int device)
{
	uint64_t w[3] = { 0, size, (uint64_t)(int64_t)device };
	int i, j;

	pthread_once(&id_once, id_seed);
	/* The pid too: a child forked after the seed counts from the same start. */
	w[0] = (atomic_fetch_add(&next_id, 1) + 1) ^ ((uint64_t)getpid() << 32);
	memset(handle, 0, TFS_IPC_HANDLE_SIZE);
	memcpy(handle, TFS_VMM_MAGIC, 8);
	for (i = 0; i < 3; i++)
		for (j = 0; j < 8; j++)
			handle[8 + 8 * i + j] = (uint8_t)(w[i] >> (8 * j));
}
