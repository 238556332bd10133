/* The copy threads of the pipeline (load_copy.h): each takes pieces (or spans) in file
 * order and moves their bytes.
 *
 * Host backend: pread/pwrite straight between the file and the mapped shared memory.
 * cuda: each copy thread owns a stream and NBUF pinned buffers (from a process-wide cache,
 * allocated once); a load reads piece k into buffer k % NBUF and queues its
 * cudaMemcpyAsync, so the DMA of one piece overlaps the read of the next; a save queues
 * the device-to-host copy of piece k and writes piece k - 1 meanwhile. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_internal.h"
#include "direct_io.h"
#include "fileio.h"
#include "fill_ioctl.h"
#include "load_files.h"
#include "load_copy.h"
#include "load_pipe.h"
#include "pinned.h"

/* Waits for buffer b's queued copy; a save then writes it out. */
static int drain(struct tfs_copy_worker *w, int b)
{
	struct run *r = w->r;
	int e, rc;

	if (!w->busy[b])
		return 0;
	uint64_t t0 = tfs_run_tick(r);

	w->busy[b] = 0;
	e = w->cu->EventSynchronize(w->ev[b]);
	tfs_run_tock(r, ST_H2D_WAIT, t0);
	if (e) {
		tfs_run_fail(r, -EIO, "cudaMemcpyAsync: %s", w->cu->GetErrorString(e));
		return -EIO;
	}
	if (!r->p->to_tensor && (rc = tfs_run_file_put(r, w->buf[b].p, w->wlen[b], w->wfoff[b]))) {
		tfs_run_fail_file(r, w->witem[b], rc);
		return rc;
	}
	tfs_run_moved(r, w->witem[b], w->wlen[b]);
	return 0;
}

static void cuda_drop(struct tfs_copy_worker *w)
{
	for (int b = 0; b < NBUF; b++) {
		drain(w, b);
		if (w->ev[b])
			w->cu->EventDestroy(w->ev[b]);
		w->ev[b] = NULL;
	}
	if (w->stream)
		w->cu->StreamDestroy(w->stream);
	w->stream = NULL;
	w->dev = -1;
}

static int cuda_setup(struct tfs_copy_worker *w, int dev)
{
	struct run *r = w->r;
	int rc, e, prev;

	if (w->dev == dev)
		return 0;
	if (!w->cu && !(w->cu = tfs_cudart_get(&rc))) {
		tfs_run_fail(r, rc, "%s", tfs_errmsg());
		return rc;
	}
	cuda_drop(w);
	if ((rc = tfs_cuda_enter(w->cu, dev, &prev))) {
		tfs_run_fail(r, rc, "%s", tfs_errmsg());
		return rc;
	}
	if ((e = w->cu->StreamCreateWithFlags(&w->stream, TFS_CUDA_STREAM_NON_BLOCKING))) {
		w->stream = NULL;
		goto fail;
	}
	for (int b = 0; b < NBUF; b++) {
		if ((e = w->cu->EventCreateWithFlags(&w->ev[b], TFS_CUDA_EVENT_DISABLE_TIMING))) {
			w->ev[b] = NULL;
			goto fail;
		}
		/* room for a direct read's alignment around the piece */
		if (!w->buf[b].p &&
		    (rc = tfs_pinned_get(w->cu, r->chunk + TFS_DIO_PAD, &w->buf[b]))) {
			tfs_run_fail(r, rc, "%s", tfs_errmsg());
			return rc;
		}
	}
	w->dev = dev;
	return 0;
fail:
	tfs_run_fail(r, -EIO, "CUDA stream setup on device %d: %s", dev, w->cu->GetErrorString(e));
	return -EIO;
}

/* The worker's buffer for direct reads that land elsewhere (host memory, the mount):
 * NULL when out of memory (then the page cache serves). */
static char *direct_buf(struct tfs_copy_worker *w)
{
	if (!w->dbuf && posix_memalign((void **)&w->dbuf, TFS_DIO_ALIGN,
				       w->r->chunk + TFS_DIO_PAD))
		w->dbuf = NULL;
	return w->dbuf;
}

/* Whether item's file is read directly by this worker. */
static int direct_for(const struct tfs_copy_worker *w, size_t item)
{
	return w->r->files.dfd && w->r->files.dfd[item] >= 0 && !w->no_direct;
}

/* Reads len bytes of item's file at foff: with O_DIRECT into buf (aligned, len +
 * TFS_DIO_PAD bytes; *at where the bytes start in it) when the item's file is read
 * directly, else through the page cache into dst (*at = dst). A file system that refuses
 * the direct read sends this worker to the page cache from then on. 0 or -errno. */
static int read_piece(struct tfs_copy_worker *w, size_t item, char *buf, char *dst, uint64_t foff,
		      size_t len, char **at)
{
	struct run *r = w->r;
	uint64_t t0 = tfs_run_tick(r);
	int rc;

	if (buf && direct_for(w, item)) {
		rc = tfs_dio_read(r->files.dfd[item], buf, foff, len, at);
		if (rc != -EINVAL) {
			tfs_run_tock(r, ST_READ, t0);
			return rc;
		}
		w->no_direct = 1;
		if (!dst) {
			tfs_run_tock(r, ST_READ, t0);
			return rc;
		}
	}
	rc = tfs_pread_full(tfs_run_src(r, item)->fd, dst, len, foff);
	*at = dst;
	tfs_run_tock(r, ST_READ, t0);
	return rc;
}

static int copy_cuda(struct tfs_copy_worker *w, char *dev, const struct piece *pc, uint64_t foff)
{
	struct run *r = w->r;
	int b = (int)(w->k++ % NBUF), rc, e;

	if ((rc = drain(w, b)))
		return rc;
	if (r->p->to_tensor && r->files.imap && r->files.imap[pc->item]) {
		/* straight from the registered page cache: no read, no staging copy */
		e = w->cu->MemcpyAsync(dev, r->files.imap[pc->item] + foff, pc->len, CUDA_H2D,
				       w->stream);
	} else if (r->p->to_tensor) {
		char *at;

		if ((rc = read_piece(w, pc->item, w->buf[b].p, w->buf[b].p, foff, pc->len, &at))) {
			tfs_run_fail_file(r, pc->item, rc);
			return rc;
		}
		e = w->cu->MemcpyAsync(dev, at, pc->len, CUDA_H2D, w->stream);
	} else {
		e = w->cu->MemcpyAsync(w->buf[b].p, dev, pc->len, CUDA_D2H, w->stream);
		w->wfoff[b] = foff;
	}
	w->wlen[b] = pc->len;
	w->witem[b] = pc->item;
	if (e || (e = w->cu->EventRecord(w->ev[b], w->stream))) {
		tfs_run_fail(r, -EIO, "cudaMemcpyAsync: %s", w->cu->GetErrorString(e));
		return -EIO;
	}
	w->busy[b] = 1;
	return 0;
}

static int copy_host(struct tfs_copy_worker *w, char *mem, const struct piece *pc, uint64_t foff)
{
	struct run *r = w->r;
	int rc;

	(void)tfs_populate(mem, pc->len, r->p->to_tensor ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
	if (r->p->to_tensor) {
		char *at, *buf = direct_for(w, pc->item) ? direct_buf(w) : NULL;

		rc = read_piece(w, pc->item, buf, mem, foff, pc->len, &at);
		if (!rc && at != mem) {
			uint64_t t0 = tfs_run_tick(r);

			memcpy(mem, at, pc->len);
			tfs_run_tock(r, ST_HOST_COPY, t0);
		}
	} else {
		rc = tfs_run_file_put(r, mem, pc->len, foff);
	}
	if (rc)
		tfs_run_fail_file(r, pc->item, rc);
	return rc;
}

/* One block of a load through the mount by splice: the file's page-cache pages go into
 * the pipe by reference and the kernel copies them once, into the FUSE request, where
 * pread + pwrite copy twice (1.5 GB/s for one thread that way on the H200). 0; 1 when
 * splice cannot serve here, nothing of the block written yet (the caller goes by
 * pread/pwrite from then on); -ENODATA when the file ended early; else a negative errno,
 * with *in_file saying which side failed. */
static int splice_block(struct tfs_copy_worker *w, int in, uint64_t ioff, int out, uint64_t ooff,
			size_t len, int *in_file)
{
	size_t done = 0;

	if (w->pipe[0] < 0) {
		if (pipe2(w->pipe, O_CLOEXEC))
			return 1;
		/* a whole request's worth: one splice out is one 1 MiB FUSE write */
		if (fcntl(w->pipe[1], F_SETPIPE_SZ, FILE_BLOCK) < (int)FILE_BLOCK) {
			close(w->pipe[0]);
			close(w->pipe[1]);
			w->pipe[0] = w->pipe[1] = -1;
			return 1;
		}
	}
	while (done < len) {
		loff_t io = (loff_t)(ioff + done), oo = (loff_t)(ooff + done);
		ssize_t n = splice(in, &io, w->pipe[1], NULL, len - done, SPLICE_F_MOVE);
		size_t left;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && done == 0 && (errno == EINVAL || errno == ENOSYS))
			return 1;
		*in_file = 1;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;
		*in_file = 0;
		for (left = (size_t)n; left > 0;) {
			ssize_t k = splice(w->pipe[0], NULL, out, &oo, left, SPLICE_F_MOVE);

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				int e = k < 0 ? errno : EIO;

				/* what is left in the pipe is garbage to the next block */
				close(w->pipe[0]);
				close(w->pipe[1]);
				w->pipe[0] = w->pipe[1] = -1;
				if (done == 0 && left == (size_t)n && (e == EINVAL || e == ENOSYS))
					return 1;
				return -e;
			}
			left -= (size_t)k;
		}
		done += (size_t)n;
	}
	return 0;
}

/* A piece of a load through the mount filled by the daemon, which reads the file itself
 * (fill_ioctl.h): the bytes cross from the page cache once, into memory the device copies
 * from. 0 or -errno, maybe with part of the piece written. */
static int fill_piece(struct tfs_copy_worker *w, int tfd, const struct piece *pc, uint64_t foff)
{
	const struct tfs_pipe_src *s = tfs_run_src(w->r, pc->item);

	for (uint64_t d = 0; d < pc->len; d += TFS_FILL_MAX) {
		struct tfs_fill_req q = {
			.fd = s->fd, .dev = s->dev, .ino = s->ino,
			.src_off = foff + d, .dst_off = pc->off + d,
			.len = pc->len - d < TFS_FILL_MAX ? pc->len - d : TFS_FILL_MAX,
		};

		if (ioctl(tfd, TFS_IOC_FILL, &q))
			return -errno;
	}
	return 0;
}

/* Before the first write() into item i's file tfd: the kernel learns the tensor's size
 * (the create told it 0 and the reshape dropped its copy), so the writes of several threads
 * go in together instead of one at a time past the size it knows; and the size is checked.
 * A load whose pieces all go by fill needs neither and spares a GETATTR per tensor. 0, or
 * a negative errno after tfs_run_fail(). */
static int sized(struct run *r, size_t i, int tfd)
{
	struct tfs_pipe_item *it = &r->p->items[i];
	struct stat st;

	if (!__atomic_exchange_n(&it->unsized, 0, __ATOMIC_ACQ_REL))
		return 0;
	if (fstat(tfd, &st)) {
		int rc = -errno;

		tfs_run_fail(r, rc, "a tensor of %s: %s", tfs_run_src(r, i)->name, tfs_strerror(-rc));
		return rc;
	}
	if ((uint64_t)st.st_size != it->bytes) {
		tfs_run_fail(r, -EIO, "a tensor of %s: made %llu bytes, expected %llu: %s",
		     tfs_run_src(r, i)->name, (unsigned long long)st.st_size,
		     (unsigned long long)it->bytes, tfs_strerror(EIO));
		return -EIO;
	}
	return 0;
}

static int copy_file(struct tfs_copy_worker *w, int tfd, const struct piece *pc, uint64_t foff)
{
	struct run *r = w->r;
	int to_tensor = r->p->to_tensor;
	int in = to_tensor ? tfs_run_src(r, pc->item)->fd : tfd, out = to_tensor ? tfd : r->p->fd;
	int rc;

	/* Read directly: the whole piece in one request, then written through the mount
	 * (a cold file is read at the disk's speed, which the mount's writes outrun). */
	if (to_tensor && direct_for(w, pc->item) && direct_buf(w)) {
		char *at;
		uint64_t t0;

		rc = read_piece(w, pc->item, w->dbuf, NULL, foff, pc->len, &at);
		if (rc && rc != -EINVAL) {
			tfs_run_fail_file(r, pc->item, rc);
			return rc;
		}
		if (!rc && (rc = sized(r, pc->item, tfd)))
			return rc;
		if (!rc) {
			t0 = tfs_run_tick(r);
			rc = tfs_pwrite_full(tfd, at, pc->len, pc->off);
			tfs_run_tock(r, ST_MOUNT_WRITE, t0);
			if (rc)
				tfs_run_fail(r, rc, "a tensor of %s: write through the mount: %s",
				     tfs_run_src(r, pc->item)->name, tfs_strerror(rc));
			return rc ? rc : tfs_run_stopped(r) ? -ECANCELED : 0;
		}
	}
	/* Whatever the daemon refuses goes by write(), which reports a failure as the file's
	 * or the tensor's. EBUSY is for this piece only: as many fills run as it allows. */
	if (to_tensor && r->fill && !w->no_fill) {
		uint64_t t0 = tfs_run_tick(r);

		rc = fill_piece(w, tfd, pc, foff);
		tfs_run_tock(r, ST_FILL, t0);
		if (rc == 0)
			return tfs_run_stopped(r) ? -ECANCELED : 0;
		if (rc != -EBUSY)
			w->no_fill = 1;
	}
	if (to_tensor && (rc = sized(r, pc->item, tfd)))
		return rc;

	for (uint64_t d = 0; d < pc->len; d += FILE_BLOCK) {
		size_t len = pc->len - d < FILE_BLOCK ? (size_t)(pc->len - d) : FILE_BLOCK;
		uint64_t ioff = to_tensor ? foff + d : pc->off + d;
		uint64_t ooff = to_tensor ? pc->off + d : foff + d;
		int in_file = 0;       /* a failure's side: the file's, else the tensor's */

		rc = 1;
		/* 1 from splice: nothing of this block moved, so pread/pwrite take it whole */
		if (to_tensor && !w->no_splice &&
		    (rc = splice_block(w, in, ioff, out, ooff, len, &in_file)) == 1)
			w->no_splice = 1;
		if (rc == 1) {
			if (!w->fbuf && posix_memalign((void **)&w->fbuf, 4096, FILE_BLOCK)) {
				w->fbuf = NULL;
				tfs_run_fail(r, -ENOMEM, "%s", tfs_strerror(ENOMEM));
				return -ENOMEM;
			}
			in_file = to_tensor;
			if (!(rc = tfs_pread_full(in, w->fbuf, len, ioff))) {
				in_file = !to_tensor;
				rc = to_tensor ? tfs_pwrite_full(out, w->fbuf, len, ooff)
					       : tfs_run_file_put(r, w->fbuf, len, ooff);
			}
		}
		if (rc && in_file)
			tfs_run_fail_file(r, pc->item, rc);
		else if (rc && to_tensor)
			tfs_run_fail(r, rc, "a tensor of %s: write through the mount: %s",
			     tfs_run_src(r, pc->item)->name,
			     tfs_strerror(rc));
		else if (rc)
			tfs_run_fail(r, rc == -ENODATA ? -EAGAIN : rc,
			     "a tensor of %s: read through the mount: %s", r->p->fname,
			     tfs_strerror(rc == -ENODATA ? EAGAIN : rc));
		if (rc)
			return rc;
		if (tfs_run_stopped(r))
			return -ECANCELED;
	}
	return 0;
}

void *tfs_copy_main(void *arg)
{
	struct tfs_copy_worker *w = arg;
	struct run *r = w->r;
	struct tfs_pipe *p = r->p;

	size_t k = 0, end = 0;         /* the pieces of this thread's span still to do */

	while (!tfs_run_stopped(r)) {
		const struct piece *pc;
		struct tfs_pipe_item *it;
		uint64_t foff;
		int rc;

		if (k == end) {
			size_t n = __atomic_fetch_add(&r->next_piece, 1, __ATOMIC_RELAXED);

			if (n >= (r->spans ? r->nspans : r->npieces))
				break;
			k = r->spans ? r->spans[n] : n;
			end = r->spans ? r->spans[n + 1] : n + 1;
		}
		pc = &r->pieces[k++];
		it = &p->items[pc->item];
		/* Before waiting for an item still being prepared, finish the pieces queued on
		 * the device: the preparing threads may be waiting for items to finish. */
		if (__atomic_load_n(&it->state, __ATOMIC_ACQUIRE) == 0 && w->dev >= 0) {
			int b, rc2 = 0;

			for (b = 0; b < NBUF && !rc2; b++)
				rc2 = drain(w, b);
			if (rc2)
				break;
		}
		pthread_mutex_lock(&r->mu);
		while (__atomic_load_n(&it->state, __ATOMIC_ACQUIRE) == 0 && !r->stop)
			pthread_cond_wait(&r->cv, &r->mu);
		pthread_mutex_unlock(&r->mu);
		if (it->state < 0 || tfs_run_stopped(r))
			break;
		foff = it->foff + pc->off;
		if (!it->t) {
			if (!(rc = copy_file(w, it->fd, pc, foff)))
				tfs_run_moved(r, pc->item, pc->len);
		} else if (tfs_tensor_on_host(it->t)) {
			if (!(rc = copy_host(w, (char *)it->t->data + pc->off, pc, foff)))
				tfs_run_moved(r, pc->item, pc->len);
		} else if (!(rc = cuda_setup(w, it->t->meta.device))) {
			rc = copy_cuda(w, (char *)it->t->data + pc->off, pc, foff);   /* tfs_run_moved() at drain */
		}
		if (rc)
			break;
		__atomic_fetch_add(&r->done, pc->len, __ATOMIC_RELAXED);
	}
	if (w->dev >= 0)
		cuda_drop(w);
	for (int b = 0; b < NBUF; b++)
		tfs_pinned_put(&w->buf[b]);
	free(w->fbuf);
	w->fbuf = NULL;
	free(w->dbuf);
	w->dbuf = NULL;
	if (w->pipe[0] >= 0) {
		close(w->pipe[0]);
		close(w->pipe[1]);
	}
	pthread_mutex_lock(&r->mu);
	r->running--;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}
