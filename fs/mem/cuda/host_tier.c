/* The cuda backend's side of the host tier (docs/tiers.md, backend.h host_register,
 * copy_host_sum): host shared memory registered with the driver once, for its life, so
 * that a sleep or a wake is a DMA between it and the device at the link's speed, and the
 * checksum of the bytes taken on the GPU (sum_kernel.cu, where nvcc built it) or else on
 * the host side as the pieces land (sleep) or before they leave (wake), overlapped with
 * the DMA of the next batch. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "mem/cuda/cuda_internal.h"
#include "log.h"
#include "tier.h"

/* Bytes per DMA: a batch of whole checksum pieces, large enough that the driver's cost per
 * call is nothing beside the copy, small enough that the sums follow the DMA closely. */
#define BATCH ((uint64_t)16 * TFS_SUM_PIECE)
/* Threads summing the host side: one core sums about 10 GB/s, the link carries 55. */
#define SUMMERS 8

int tfs_cuda_host_register(struct tfs_backend *be, void *p, size_t len)
{
	cudaError_t e;

	(void)be;
	if (!len)
		return 0;
	e = cudaHostRegister(p, len, cudaHostRegisterPortable);
	if (e == cudaErrorHostMemoryAlreadyRegistered) {
		cudaGetLastError();
		return 0;
	}
	if (e != cudaSuccess) {
		cudaGetLastError();
		return tfs_cuda_fail(e, "cudaHostRegister of host-tier memory", -1);
	}
	return 0;
}

void tfs_cuda_host_unregister(struct tfs_backend *be, void *p)
{
	(void)be;
	if (cudaHostUnregister(p) != cudaSuccess)
		cudaGetLastError();
}

/* The checksum pieces of [at, at + n) of the host side, at tensor offsets base_off + at. */
static uint64_t sum_range(const uint8_t *host, uint64_t at, uint64_t n, uint64_t base_off)
{
	uint64_t sum = 0;

	for (uint64_t o = 0; o < n; o += TFS_SUM_PIECE) {
		uint64_t len = n - o < TFS_SUM_PIECE ? n - o : TFS_SUM_PIECE;

		sum = tfs_sum_add(sum, tfs_sum_piece(host + at + o, (size_t)len, base_off + at + o));
	}
	return sum;
}

/* One summing thread: the batches t, t + nt, ...; with events (a sleep), each once its
 * DMA has landed. */
struct summer {
	pthread_t th;
	const uint8_t *h;
	uint64_t len, off, nb;
	cudaEvent_t *ev;        /* NULL: the bytes are there already (a wake) */
	int ordinal, t, nt, started;
	uint64_t acc;
	cudaError_t e;
};

static void *summer_run(void *arg)
{
	struct summer *m = arg;

	m->acc = 0;
	m->e = m->ev ? cudaSetDevice(m->ordinal) : cudaSuccess;
	for (uint64_t i = (uint64_t)m->t; i < m->nb && m->e == cudaSuccess; i += (uint64_t)m->nt) {
		uint64_t at = i * BATCH, n = m->len - at < BATCH ? m->len - at : BATCH;

		if (m->ev && (m->e = cudaEventSynchronize(m->ev[i])) != cudaSuccess)
			break;
		m->acc = tfs_sum_add(m->acc, sum_range(m->h, at, n, m->off));
	}
	return NULL;
}

#ifdef TFS_HAVE_SUM_KERNEL
/* The copy as one DMA on s's stream, the sum taken on the GPU (sum_kernel.cu): of the
 * device's bytes before they leave (a sleep), of what landed (a wake). */
static cudaError_t copy_gpu_sum(struct slot *s, uint64_t dev, uint8_t *h, size_t len,
				uint64_t off, int to_dev, uint64_t *acc)
{
	unsigned long long *d_acc = NULL, got = 0;
	cudaError_t e, e2;

	e = cudaMallocAsync((void **)&d_acc, sizeof(*d_acc), s->stream);
	if (e == cudaSuccess)
		e = cudaMemsetAsync(d_acc, 0, sizeof(*d_acc), s->stream);
	if (e == cudaSuccess && !to_dev)
		e = (cudaError_t)tfs_cuda_sum_launch((const void *)(uintptr_t)dev, len, off, d_acc,
						     s->stream);
	if (e == cudaSuccess)
		e = cudaMemcpyAsync(to_dev ? (void *)(uintptr_t)dev : (void *)h,
				    to_dev ? (const void *)h : (const void *)(uintptr_t)dev, len,
				    to_dev ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
				    s->stream);
	if (e == cudaSuccess && to_dev)
		e = (cudaError_t)tfs_cuda_sum_launch((const void *)(uintptr_t)dev, len, off, d_acc,
						     s->stream);
	if (e == cudaSuccess)
		e = cudaMemcpyAsync(&got, d_acc, sizeof(got), cudaMemcpyDeviceToHost, s->stream);
	if (d_acc && (e2 = cudaFreeAsync(d_acc, s->stream)) != cudaSuccess && e == cudaSuccess)
		e = e2;
	/* Whatever failed, nothing queued may outlive the call: got and h are the caller's. */
	if ((e2 = cudaStreamSynchronize(s->stream)) != cudaSuccess && e == cudaSuccess)
		e = e2;
	if (e == cudaSuccess)
		*acc = tfs_sum_add(*acc, got);
	return e;
}
#endif

int tfs_cuda_copy_host_sum(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
			   void *host, size_t len, int to_dev, uint64_t *sum)
{
	struct summer m[SUMMERS];
	uint8_t *h = host;
	uint64_t dev, nb = (len + BATCH - 1) / BATCH, acc = *sum, made = 0;
	cudaEvent_t *ev = NULL;
	cudaError_t e = cudaSuccess;
	struct slot *s;
	int rc, nt;

	(void)be;
	if (!a || off % TFS_SUM_PIECE || off > tfs_cuda_bytes(a) ||
	    len > tfs_cuda_bytes(a) - off)
		return -EINVAL;
	if (!len)
		return 0;
	if ((rc = tfs_cuda_dev_current(a->dev)) < 0)
		return rc;
	dev = tfs_cuda_addr(a) + off;
#ifdef TFS_HAVE_SUM_KERNEL
	if (!(dev & 7)) {
		s = tfs_cuda_slot_get(a->dev);
		e = copy_gpu_sum(s, dev, h, len, off, to_dev, &acc);
		tfs_cuda_slot_put(a->dev, s);
		if (e != cudaSuccess)
			return tfs_cuda_fail(e, to_dev ? "wake: copy to device" :
					     "sleep: copy from device", a->dev->ordinal);
		*sum = acc;
		return 0;
	}
#endif
	if (!to_dev && !(ev = calloc(nb, sizeof(*ev))))
		return -ENOMEM;
	s = tfs_cuda_slot_get(a->dev);
	/* Every batch issued at once (the host side is registered: no staging ring), an
	 * event after each for a sleep, whose summers wait for their batches; a wake's
	 * summers read the host bytes as the DMAs do. */
	for (uint64_t i = 0; i < nb && e == cudaSuccess; i++) {
		uint64_t at = i * BATCH, n = len - at < BATCH ? len - at : BATCH;

		if (to_dev) {
			e = cudaMemcpyAsync((void *)(uintptr_t)(dev + at), h + at, n,
					    cudaMemcpyHostToDevice, s->stream);
			continue;
		}
		e = cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming);
		if (e == cudaSuccess) {
			made++;
			e = cudaMemcpyAsync(h + at, (const void *)(uintptr_t)(dev + at), n,
					    cudaMemcpyDeviceToHost, s->stream);
		}
		if (e == cudaSuccess)
			e = cudaEventRecord(ev[i], s->stream);
	}
	nt = e != cudaSuccess ? 0 : nb < SUMMERS ? (int)nb : SUMMERS;
	for (int t = 0; t < nt; t++) {
		m[t] = (struct summer){ .h = h, .len = len, .off = off, .nb = nb, .ev = ev,
					.ordinal = a->dev->ordinal, .t = t, .nt = nt };
		m[t].started = pthread_create(&m[t].th, NULL, summer_run, &m[t]) == 0;
		if (!m[t].started)
			summer_run(&m[t]);
	}
	for (int t = 0; t < nt; t++) {
		if (m[t].started)
			pthread_join(m[t].th, NULL);
		if (m[t].e != cudaSuccess && e == cudaSuccess)
			e = m[t].e;
		acc = tfs_sum_add(acc, m[t].acc);
	}
	{
		cudaError_t e2 = cudaStreamSynchronize(s->stream);

		tfs_cuda_slot_put(a->dev, s);
		if (e == cudaSuccess)
			e = e2;
	}
	for (uint64_t i = 0; i < made; i++)
		cudaEventDestroy(ev[i]);
	free(ev);
	if (e != cudaSuccess)
		return tfs_cuda_fail(e, to_dev ? "wake: copy to device" : "sleep: copy from device",
				     a->dev->ordinal);
	*sum = acc;
	return 0;
}

int tfs_cuda_release_cached(struct tfs_backend *be, int device)
{
	struct cdev *d;
	int rc;

	if ((rc = tfs_cuda_dev_get(be, device, &d)))
		return rc;
	/* A preallocated device keeps its segments with their keys: the wake finds them. */
	if (d->seg)
		return 0;
	/* What was just freed is zeroed and back in the pool first, then every block with
	 * nothing live goes back to the driver. */
	tfs_cuda_zero_drain(d);
	tfs_pool_trim(d->pool);
	return 0;
}
