/* Copies between host memory and a device, through the staging slots (device.c): pageable
 * memory in pieces through a slot's ring, pinned memory (the io region, a read area) in
 * one DMA; and device-to-device copies and zero-fills for resize, owner moves and memory
 * given back to the pool. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "mem/cuda/cuda_internal.h"
#include "fileio.h"

/* Requests up to PIECE_MIN go in one piece; a 1 MiB FUSE request in two. Each piece costs
 * a few microseconds of CUDA calls, and the CPU copy (about 7 GB/s for one thread on the
 * H100 test machine) dominates: measured there with 1 MiB calls, 1 and 8 threads, GB/s in
 * and out, 128 KiB: 6.2/6.6, 19/21; 256 KiB: 5.8/5.5, 14/16; 512 KiB: 6.4/6.0, 23/23;
 * 1 MiB: 5.9/5.5, 25/21 (one sample each, host memory bandwidth varied by 30% between
 * runs). Overridable for such measurements. */
#ifndef TFS_CUDA_PIECE_MIN
#define TFS_CUDA_PIECE_MIN (512 * KiB)
#endif
#define PIECE_MIN ((uint64_t)TFS_CUDA_PIECE_MIN)

/* The end of work on a slot's stream, also on error: the stream is drained (nothing may
 * still read or fill the slot when it is handed back) and the slot given back. 0 or the
 * first error, logged as what. */
static int slot_done(struct cdev *d, struct slot *s, cudaError_t e, const char *what)
{
	cudaError_t e2 = cudaStreamSynchronize(s->stream);

	tfs_cuda_slot_put(d, s);
	if (e == cudaSuccess)
		e = e2;
	return e == cudaSuccess ? 0 : tfs_cuda_fail(e, what, d->ordinal);
}

/* On the device: copy copy_len bytes from src to dst, then zero zero_len bytes at zero_at.
 * Returns once done. */
int tfs_cuda_dev_copy_zero(struct cdev *d, uint64_t dst, uint64_t src, uint64_t copy_len,
			   uint64_t zero_at, uint64_t zero_len)
{
	struct slot *s = tfs_cuda_slot_get(d);
	cudaError_t e = cudaSuccess;

	if (copy_len)
		e = cudaMemcpyAsync((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, copy_len,
				    cudaMemcpyDeviceToDevice, s->stream);
	if (e == cudaSuccess && zero_len)
		e = cudaMemsetAsync((void *)(uintptr_t)zero_at, 0, zero_len, s->stream);
	return slot_done(d, s, e, "device copy/zero-fill");
}

void tfs_cuda_copyq_begin(struct tfs_cuda_copyq *q, struct cdev *d)
{
	q->d = d;
	q->s = tfs_cuda_slot_get(d);
	q->e = cudaSuccess;
}

void tfs_cuda_copyq_peer(struct tfs_cuda_copyq *q, uint64_t dst, struct cdev *src_d,
			 uint64_t src, uint64_t len)
{
	/* The driver picks the path: over NVLink or PCIe peer-to-peer where the two devices
	 * can reach each other, through host memory where they cannot. */
	if (q->e == cudaSuccess && len)
		q->e = cudaMemcpyPeerAsync((void *)(uintptr_t)dst, q->d->ordinal,
					   (const void *)(uintptr_t)src, src_d->ordinal, len,
					   q->s->stream);
}

void tfs_cuda_copyq_zero(struct tfs_cuda_copyq *q, uint64_t at, uint64_t len)
{
	if (q->e == cudaSuccess && len)
		q->e = cudaMemsetAsync((void *)(uintptr_t)at, 0, len, q->s->stream);
}

int tfs_cuda_copyq_end(struct tfs_cuda_copyq *q, const char *what)
{
	return slot_done(q->d, q->s, q->e, what);
}

int tfs_cuda_peer_copy(struct cdev *dst_d, uint64_t dst, struct cdev *src_d, uint64_t src,
		       uint64_t len)
{
	struct tfs_cuda_copyq q;

	tfs_cuda_copyq_begin(&q, dst_d);
	tfs_cuda_copyq_peer(&q, dst, src_d, src, len);
	return tfs_cuda_copyq_end(&q, "peer copy");
}

static uint64_t piece_size(size_t len)
{
	uint64_t p;

	if (len <= PIECE_MIN)
		return len;
	p = (len / RING + 64 * KiB - 1) / (64 * KiB) * (64 * KiB);
	if (p < PIECE_MIN)
		p = PIECE_MIN;
	if (p > PIECE_MAX)
		p = PIECE_MAX;
	return p;
}

static int check_range(struct tfs_alloc *a, uint64_t off, size_t len)
{
	uint64_t bytes;

	if (!a)
		return -EINVAL;
	bytes = tfs_cuda_bytes(a);
	if (off > bytes || len > bytes - off)
		return -EINVAL;
	return 0;
}

/* src lies in the pinned request buffers: a write's bytes go to the device from where the
 * kernel put them, no CPU copy. */
static int in_io_region(struct tfs_backend *be, const void *src, size_t len)
{
	uintptr_t p = (uintptr_t)src, base = (uintptr_t)be->io;

	return be->io && p >= base && len <= be->io_bytes && p - base <= be->io_bytes - len;
}

/* One DMA between pinned host memory and the device, on a slot's stream, waited for. */
static int copy_pinned(struct cdev *d, void *dst, const void *src, size_t len,
		       enum cudaMemcpyKind kind)
{
	struct slot *s = tfs_cuda_slot_get(d);
	cudaError_t e = cudaMemcpyAsync(dst, src, len, kind, s->stream);

	return slot_done(d, s, e, kind == cudaMemcpyHostToDevice ? "copy to device" :
			 "copy from device");
}

/* The device address of off in a, its device made current: 0 or -errno. */
static int device_range(struct tfs_alloc *a, uint64_t off, size_t len, uint64_t *addr)
{
	int rc = check_range(a, off, len);

	if (rc < 0 || (rc = tfs_cuda_dev_current(a->dev)) < 0)
		return rc;
	*addr = tfs_cuda_addr(a) + off;
	return 0;
}

/* Where a copy to the device takes its bytes: memory, or a file (mem NULL). */
struct source {
	const uint8_t *mem;
	int fd;
	uint64_t foff;
};

/* len bytes of src into the device at dst, in pieces through a slot's ring: the CPU's
 * copy (or the file's read) of one piece overlaps the DMA of the pieces before it. */
static int ring_in(struct cdev *d, uint64_t dst, const struct source *src, size_t len,
		   uint64_t piece)
{
	struct slot *s = tfs_cuda_slot_get(d);
	cudaError_t e = cudaSuccess;
	uint64_t done;
	size_t i;
	int rc = 0, rc2;

	for (i = 0, done = 0; done < len; i++) {
		uint8_t *buf = s->buf + (i % RING) * PIECE_MAX;
		uint64_t n = len - done < piece ? len - done : piece;

		/* Sub-buffer i % RING is free again once the DMA RING pieces ago finished. */
		if (i >= RING) {
			e = cudaEventSynchronize(s->ev[i % RING]);
			if (e != cudaSuccess)
				break;
		}
		if (src->mem)
			memcpy(buf, src->mem + done, n);
		else if ((rc = tfs_pread_full(src->fd, buf, n, src->foff + done)))
			break;
		e = cudaMemcpyAsync((void *)(uintptr_t)(dst + done), buf, n,
				    cudaMemcpyHostToDevice, s->stream);
		/* An event only where piece i + RING will wait for it: each CUDA call costs
		 * microseconds, a fair share of a 1 MiB request. */
		if (e == cudaSuccess && len - done - n > (RING - 1) * piece)
			e = cudaEventRecord(s->ev[i % RING], s->stream);
		if (e != cudaSuccess)
			break;
		done += n;
	}
	/* Drained also after a failed read, since a DMA may still read the ring. Once this
	 * returns the bytes are in device memory, for any process that maps the handle. */
	rc2 = slot_done(d, s, e, "copy to device");
	return rc ? rc : rc2;
}

int tfs_cuda_copy_in(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
		     const void *src, size_t len)
{
	struct source from = { .mem = src };
	uint64_t dst;
	int rc;

	if ((rc = device_range(a, off, len, &dst)) || !len)
		return rc;
	if (in_io_region(be, src, len))
		return copy_pinned(a->dev, (void *)(uintptr_t)dst, src, len,
				   cudaMemcpyHostToDevice);
	return ring_in(a->dev, dst, &from, len, piece_size(len));
}

/* Each piece read from the file into the ring, PIECE_MAX at a time (no CPU copy to keep
 * short, as for copy_in: the file's read is the only one). */
int tfs_cuda_copy_in_fd(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, int fd,
			uint64_t foff, size_t len)
{
	struct source from = { .fd = fd, .foff = foff };
	uint64_t dst;
	int rc;

	(void)be;
	if ((rc = device_range(a, off, len, &dst)) || !len)
		return rc;
	return ring_in(a->dev, dst, &from, len, PIECE_MAX);
}

int tfs_cuda_copy_out(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
		      void *dst, size_t len)
{
	uint8_t *to = dst;
	struct cdev *d;
	struct slot *s;
	uint64_t src, piece, issued = 0, done;
	cudaError_t e = cudaSuccess;
	size_t i, next = 0;
	int rc;

	(void)be;
	if ((rc = device_range(a, off, len, &src)) || !len)
		return rc;
	d = a->dev;
	piece = piece_size(len);
	s = tfs_cuda_slot_get(d);
	/* Keep up to RING pieces in flight; copy each out of its sub-buffer as it lands. */
	for (i = 0, done = 0; done < len; i++) {
		uint64_t n = len - done < piece ? len - done : piece;

		while (e == cudaSuccess && issued < len && next < i + RING) {
			uint64_t m = len - issued < piece ? len - issued : piece;

			e = cudaMemcpyAsync(s->buf + (next % RING) * PIECE_MAX,
					    (const void *)(uintptr_t)(src + issued), m,
					    cudaMemcpyDeviceToHost, s->stream);
			if (e == cudaSuccess)
				e = cudaEventRecord(s->ev[next % RING], s->stream);
			issued += m;
			next++;
		}
		if (e == cudaSuccess)
			e = cudaEventSynchronize(s->ev[i % RING]);
		if (e != cudaSuccess)
			break;
		memcpy(to + done, s->buf + (i % RING) * PIECE_MAX, n);
		done += n;
	}
	return slot_done(d, s, e, "copy from device");
}

/* One DMA of len bytes at off into the calling thread's read area: 0 with *out. */
static int to_area(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, size_t len,
		   struct rarea **out)
{
	struct rarea *r;
	int rc;

	rc = check_range(a, off, len);
	if (rc < 0)
		return rc;
	if (len > RAREA_BYTES || !(r = tfs_cuda_area_get(be)))
		return -ENOTSUP;
	if ((rc = tfs_cuda_dev_current(a->dev)) < 0 ||
	    (rc = copy_pinned(a->dev, r->p,
			      (const void *)(uintptr_t)(tfs_cuda_addr(a) + off), len,
			      cudaMemcpyDeviceToHost)) < 0)
		return rc;
	*out = r;
	return 0;
}

int tfs_cuda_read_fd(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, size_t len,
		     int *fd, off_t *pos)
{
	struct rarea *r;
	int rc = to_area(be, a, off, len, &r);

	if (rc < 0)
		return rc;
	*fd = r->fd;
	*pos = 0;
	return 0;
}

int tfs_cuda_read_mem(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, size_t len,
		      const void **mem)
{
	struct rarea *r;
	int rc = to_area(be, a, off, len, &r);

	if (rc < 0)
		return rc;
	*mem = r->p;
	return 0;
}
