/* The CUDA backend (backend.h): its start-up and end, and the operations
 * tfs_backend_find("cuda") returns. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem/cuda/cuda_internal.h"
#include "mem/keeper/keeper.h"
#include "log.h"

/* Numbers the backends: a thread's read area belongs to one generation (areas.c). */
static _Atomic unsigned be_gens;

int tfs_cuda_init(struct tfs_backend **out, int device, uint64_t max_bytes)
{
	struct tfs_backend *be;
	struct cdev *d;
	cudaError_t e;
	int n = 0, i, rc;

	e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n <= 0) {
		if (e != cudaSuccess)
			tfs_cuda_fail(e, "cudaGetDeviceCount", device);
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
	be->dev_total = calloc((size_t)n, sizeof(*be->dev_total));
	if (!be->devs || !be->dev_total || pthread_mutex_init(&be->init_mu, NULL)) {
		free(be->dev_total);
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
	be->block_ops = &tfs_cuda_block_ops;
	be->zero_main = tfs_cuda_zero_main;
	for (i = 0; i < n; i++) {
		struct cudaDeviceProp prop;

		atomic_init(&be->devs[i], NULL);
		if (cudaGetDeviceProperties(&prop, i) == cudaSuccess)
			be->dev_total[i] = prop.totalGlobalMem;
		else
			(void)cudaGetLastError();
	}
	rc = tfs_cuda_dev_get(be, device, &d);
	/* VMM memory lives while a descriptor of it does: the daemon keeps one beside the
	 * keeper's (handover.h), from the first listed on. */
	if (rc == 0 && tfs_cuda_vmm)
		tfs_keeper_two_holders();
	if (rc == 0)
		rc = tfs_cuda_list_found(be);
	if (rc < 0) {
		free(be->found);
		pthread_mutex_destroy(&be->areas_mu);
		pthread_mutex_destroy(&be->marks_mu);
		pthread_mutex_destroy(&be->init_mu);
		free(be->dev_total);
		free(be->devs);
		free(be);
		return rc;
	}
	if (max_bytes)
		tfs_log(LOG_INFO, "cuda: capped at %" PRIu64 " MiB per device", max_bytes / MiB);
	*out = be;
	return 0;
}

void tfs_cuda_fini(struct tfs_backend *be)
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
	/* A start that failed before adopt_end leaves the blocks to the keeper: records may
	 * name them. */
	tfs_cuda_found_forget(be);
	for (i = 0; i < be->ndev; i++)
		tfs_cuda_dev_destroy(atomic_load(&be->devs[i]));
	if (be->io)
		cudaFreeHost(be->io);
	pthread_mutex_destroy(&be->areas_mu);
	pthread_mutex_destroy(&be->marks_mu);
	pthread_mutex_destroy(&be->init_mu);
	free(be->dev_total);
	free(be->devs);
	free(be);
}

int tfs_cuda_device_count(struct tfs_backend *be)
{
	return be->ndev;
}

const struct tfs_backend_ops tfs_backend_cuda = {
	.name = "cuda",
	.init = tfs_cuda_init,
	.fini = tfs_cuda_fini,
	.device_count = tfs_cuda_device_count,
	.alloc = tfs_cuda_alloc,
	.free = tfs_cuda_free,
	.resize = tfs_cuda_resize,
	.export_handle = tfs_cuda_export_handle,
	.set_owner = tfs_cuda_set_owner,
	.copy_in = tfs_cuda_copy_in,
	.copy_out = tfs_cuda_copy_out,
	.copy_in_fd = tfs_cuda_copy_in_fd,
	.wait_mark = tfs_cuda_wait_mark,
	.io_region = tfs_cuda_io_region,
	.read_fd = tfs_cuda_read_fd,
	.read_mem = tfs_cuda_read_mem,
	.stats = tfs_cuda_stats,
	.move = tfs_cuda_move,
	.move_sum = tfs_cuda_move_sum,
	.adopt = tfs_cuda_adopt,
	.adopt_end = tfs_cuda_adopt_end,
	.host_register = tfs_cuda_host_register,
	.set_caps = tfs_cuda_set_caps,
	.host_unregister = tfs_cuda_host_unregister,
	.copy_host_sum = tfs_cuda_copy_host_sum,
	.release_cached = tfs_cuda_release_cached,
	.export_fd = tfs_cuda_vmm_export_fd,
	.export_chunks = tfs_cuda_vmm_export_chunks,
	.grows_in_place = tfs_cuda_vmm_grows_in_place,
};
