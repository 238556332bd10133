/* Written marks: interprocess events producers record after their kernels write a
 * tensor (tfs_mark_written), which a read waits for (wait_mark) before it copies. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "mem/cuda/cuda_internal.h"

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

int tfs_cuda_wait_mark(struct tfs_backend *be, int device,
		       const uint8_t mark[TFS_IPC_HANDLE_SIZE])
{
	cudaIpcEventHandle_t h;
	struct cdev *d;
	struct mark *m;
	cudaError_t e;
	int rc;

	memcpy(&h, mark, sizeof(h));
	if ((rc = tfs_cuda_dev_get(be, device, &d)) < 0)
		return rc;
	rc = tfs_cuda_dev_current(d);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&be->marks_mu);
	m = mark_get(be, d->ordinal, &h, &e);
	pthread_mutex_unlock(&be->marks_mu);
	if (!m)
		return e == cudaErrorMemoryAllocation ? -ENOMEM : -ESTALE;
	/* Outside the lock: the producer's kernel may run for a while, and other tensors'
	 * reads must not wait for it. users keeps the entry from being reused meanwhile. */
	e = cudaEventSynchronize(m->ev);
	pthread_mutex_lock(&be->marks_mu);
	m->users--;
	pthread_mutex_unlock(&be->marks_mu);
	return e == cudaSuccess ? 0 : tfs_cuda_fail(e, "waiting for the written mark",
						    d->ordinal);
}
