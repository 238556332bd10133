/* Host memory that FUSE requests and replies use directly, so that their bytes are not
 * copied once more: the io region (the loop's request buffers, which copy_in DMAs a write
 * from) and the read areas (where read_fd puts a read for the reply to splice from). */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem/cuda/cuda_internal.h"
#include "log.h"

/* A thread may outlive a backend (tests init and fini several): its area is valid only
 * while my_gen is the backend's generation. */
static __thread struct rarea *my_area;
static __thread unsigned my_gen, my_failed_gen;

struct rarea *tfs_cuda_area_get(struct tfs_backend *be)
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

/* Portable: pinned for every device's context, since a worker's next write may go to any
 * device. Pinning costs about 50 ms per 64 MiB on the test machine; done once. */
void *tfs_cuda_io_region(struct tfs_backend *be, size_t bytes)
{
	cudaError_t e;
	void *p = NULL;

	if (be->io)
		return NULL;
	e = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
	if (e != cudaSuccess) {
		tfs_cuda_fail(e, "cudaHostAlloc of the request buffers", be->default_dev);
		return NULL;
	}
	be->io = p;
	be->io_bytes = bytes;
	tfs_log(LOG_INFO, "cuda: %zu MiB of pinned request buffers", bytes >> 20);
	return p;
}
