/* The cuda backend's side of the host tier (docs/tiers.md, backend.h host_register,
 * copy_host_sum): host shared memory registered with the driver once, for its life, so
 * that a sleep or a wake is a DMA between it and the device at the link's speed, and the
 * checksum of the bytes taken on the host side as the pieces land (sleep) or before they
 * leave (wake), overlapped with the DMA of the next batch: no second pass. */
#include <errno.h>
#include <stdint.h>

#include "mem/cuda/cuda_internal.h"
#include "log.h"
#include "tier.h"

/* Bytes per DMA: a batch of whole checksum pieces, large enough that the driver's cost per
 * call is nothing beside the copy; RING of them in flight. */
#define BATCH ((uint64_t)16 * TFS_SUM_PIECE)

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
static uint64_t sum_range(const uint8_t *host, uint64_t at, uint64_t n, uint64_t base_off,
			  uint64_t sum)
{
	for (uint64_t o = 0; o < n; o += TFS_SUM_PIECE) {
		uint64_t len = n - o < TFS_SUM_PIECE ? n - o : TFS_SUM_PIECE;

		sum = tfs_sum_add(sum, tfs_sum_piece(host + at + o, (size_t)len, base_off + at + o));
	}
	return sum;
}

int tfs_cuda_copy_host_sum(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
			   void *host, size_t len, int to_dev, uint64_t *sum)
{
	uint8_t *h = host;
	uint64_t dev, nb = (len + BATCH - 1) / BATCH, acc = *sum;
	cudaError_t e = cudaSuccess;
	struct slot *s;
	int rc;

	(void)be;
	if (!a || off % TFS_SUM_PIECE || off > tfs_pool_chunk_bytes(a->chunk) ||
	    len > tfs_pool_chunk_bytes(a->chunk) - off)
		return -EINVAL;
	if (!len)
		return 0;
	if ((rc = tfs_cuda_dev_current(a->dev)) < 0)
		return rc;
	dev = tfs_pool_chunk_addr(a->chunk) + off;
	s = tfs_cuda_slot_get(a->dev);
	if (to_dev) {
		/* Each batch summed, then sent; the next one summed while it flies. */
		for (uint64_t i = 0; i < nb && e == cudaSuccess; i++) {
			uint64_t at = i * BATCH, n = len - at < BATCH ? len - at : BATCH;

			if (i >= RING)
				e = cudaEventSynchronize(s->ev[i % RING]);
			if (e != cudaSuccess)
				break;
			acc = sum_range(h, at, n, off, acc);
			e = cudaMemcpyAsync((void *)(uintptr_t)(dev + at), h + at, n,
					    cudaMemcpyHostToDevice, s->stream);
			if (e == cudaSuccess)
				e = cudaEventRecord(s->ev[i % RING], s->stream);
		}
	} else {
		/* RING batches in flight; each summed as it lands. */
		uint64_t issued = 0;

		for (uint64_t i = 0; i < nb && e == cudaSuccess; i++) {
			uint64_t at = i * BATCH, n = len - at < BATCH ? len - at : BATCH;

			while (e == cudaSuccess && issued < nb && issued < i + RING) {
				uint64_t bt = issued * BATCH, m = len - bt < BATCH ? len - bt : BATCH;

				e = cudaMemcpyAsync(h + bt, (const void *)(uintptr_t)(dev + bt), m,
						    cudaMemcpyDeviceToHost, s->stream);
				if (e == cudaSuccess)
					e = cudaEventRecord(s->ev[issued % RING], s->stream);
				issued++;
			}
			if (e == cudaSuccess)
				e = cudaEventSynchronize(s->ev[i % RING]);
			if (e == cudaSuccess)
				acc = sum_range(h, at, n, off, acc);
		}
	}
	{
		cudaError_t e2 = cudaStreamSynchronize(s->stream);

		tfs_cuda_slot_put(a->dev, s);
		if (e == cudaSuccess)
			e = e2;
	}
	if (e != cudaSuccess)
		return tfs_cuda_fail(e, to_dev ? "wake: copy to device" : "sleep: copy from device",
				     a->dev->ordinal);
	*sum = acc;
	return 0;
}
