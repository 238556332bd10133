/* The cuda backend's memory under --memory vmm as the keeper makes it (keeper.h,
 * docs/vmm.md): an allocation per request, made with cuMemCreate and exported as a POSIX
 * descriptor, which the keeper keeps and sends to the daemon (who imports and maps it).
 * Such memory lives while any process holds a descriptor or handle of it, so a keeper that
 * took allocations over from a dead one (handover.h) holds them by their descriptors alone,
 * without CUDA. The host tier's allocations are the host keeper memory's (keeper.c
 * mem_of), whose adoption this memory's adopt_done finishes too. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "mem/cuda/vmm_drv.h"
#include "mem/keeper/keeper.h"
#include "log.h"

struct kvmm {
	int fd;
	int have_h;                       /* made here (not taken over) */
	CUmemGenericAllocationHandle h;
	int device;
};

static void vmm_mem_free(void *priv, uint64_t size, int device);

static int vmm_mem_alloc(uint64_t size, int device, uid_t uid, gid_t gid, mode_t mode,
			 uint8_t handle[TFS_IPC_HANDLE_SIZE], int *fd, void **priv)
{
	struct kvmm *m;
	int rc;

	(void)uid; (void)gid; (void)mode;
	*fd = -1;
	/* The runtime starts the driver and makes the device's primary context current. */
	if (cudaSetDevice(device) != cudaSuccess || cudaFree(NULL) != cudaSuccess) {
		(void)cudaGetLastError();
		return -EINVAL;
	}
	if (!(m = calloc(1, sizeof(*m))))
		return -ENOMEM;
	rc = tfs_vmm_create(device, size, &m->h, &m->fd);
	if (rc < 0) {
		free(m);
		return rc == -ENOSPC ? -ENOMEM : rc;    /* keeper.h: full is -ENOMEM */
	}
	m->have_h = 1;
	m->device = device;
	/* keeper.c sends the descriptor and closes it: a copy; m keeps its own. */
	*fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 3);
	if (*fd < 0) {
		rc = -errno;
		vmm_mem_free(m, size, device);
		return rc;
	}
	tfs_vmm_handle_make(handle, size, device);
	*priv = m;
	return 0;
}

static void vmm_mem_free(void *priv, uint64_t size, int device)
{
	struct kvmm *m = priv;
	const struct tfs_vmm_drv *d;
	CUresult r;

	(void)size; (void)device;
	if (m->have_h && (d = tfs_vmm_drv())) {
		cudaSetDevice(m->device);
		if ((r = d->MemRelease(m->h)) != CUDA_SUCCESS)
			tfs_vmm_fail(r, "keeper: cuMemRelease", m->device);
	}
	close(m->fd);
	free(m);
}

static int vmm_mem_fd(void *priv)
{
	return ((struct kvmm *)priv)->fd;
}

static int vmm_mem_adopt(int fd, const uint8_t handle[TFS_IPC_HANDLE_SIZE], uint64_t size,
			 int device, void **priv)
{
	struct kvmm *m = calloc(1, sizeof(*m));

	(void)handle; (void)size;
	if (!m) {
		close(fd);
		return -ENOMEM;
	}
	m->fd = fd;
	m->device = device;
	*priv = m;
	return 0;
}

static void vmm_mem_adopt_done(void)
{
	if (tfs_keeper_mem_host.adopt_done)
		tfs_keeper_mem_host.adopt_done();
}

const struct tfs_keeper_mem tfs_keeper_mem_vmm = {
	.name = "cuda_vmm",
	.alloc = vmm_mem_alloc,
	.free = vmm_mem_free,
	.fd = vmm_mem_fd,
	.copy = NULL,
	.adopt = vmm_mem_adopt,
	.adopt_done = vmm_mem_adopt_done,
};
