/* The copy pipeline of tfs_load and tfs_save (load_pipe.h).
 *
 * The file's ranges are cut into pieces of at most 4 MiB (TFS_LOAD_CHUNK_MB), never across
 * tensors, and copy threads take them in file order (the kernel's readahead sees one
 * sequential reader). A piece of a tensor still being prepared waits for it; preparing
 * threads work through the tensors in the same order, so the copy follows right behind
 * them, at most TFS_PIPE_WINDOW tensors ahead of the last one finished.
 *
 * A save into a mapping takes spans instead: runs of consecutive pieces, one thread's
 * each, long enough that every thread writes its own stretch of the file. Threads writing
 * interleaved 4 MiB pieces of one fallocated ext4 file through a mapping made 1.9 GB/s on
 * the H200, threads writing 256 MiB stretches 11-12 (tests/bench/RESULTS-gpu.md). A span
 * holds at most TFS_PIPE_WINDOW / threads tensors, so every thread's first tensor is
 * inside the window of prepared ones and a file of many small tensors keeps its threads.
 *
 * A load reads a file that is not in the page cache with O_DIRECT, or DMAs from the
 * page cache registered with CUDA (TFS_LOAD_REGISTER=1): load_files.h decides per file.
 * TFS_LOAD_PROFILE=1 times each stage and prints the sums at the end.
 *
 * Host backend: pread/pwrite straight between the file and the mapped shared memory.
 * cuda: each copy thread owns a stream and NBUF pinned buffers (from a process-wide cache,
 * allocated once); a load reads piece k into buffer k % NBUF and queues its
 * cudaMemcpyAsync, so the DMA of one piece overlaps the read of the next; a save queues
 * the device-to-host copy of piece k and writes piece k - 1 meanwhile. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client_internal.h"
#include "direct_io.h"
#include "fileio.h"
#include "fill_ioctl.h"
#include "load_files.h"
#include "load_pipe.h"
#include "pinned.h"

#define NBUF 2
#define MAX_THREADS 64
#define FILE_BLOCK (1u << 20)          /* through FUSE: the mount's max_read/max_write */
#define CUDA_H2D 1                     /* cudaMemcpyHostToDevice */
#define CUDA_D2H 2

struct piece {
	size_t item;
	uint64_t off, len;             /* inside the tensor */
};

/* The stages of a load the profile times (TFS_LOAD_PROFILE=1). */
enum stage { ST_PREPARE, ST_READ, ST_H2D_WAIT, ST_FILL, ST_MOUNT_WRITE, ST_HOST_COPY,
	     ST_REGISTER, ST_COUNT };

struct run {
	struct tfs_pipe *p;
	pthread_mutex_t mu;
	pthread_cond_t cv;             /* an item became ready or failed; a thread ended */
	struct piece *pieces;
	size_t npieces;
	size_t *spans;                 /* NULL, or each span's first piece, then npieces */
	size_t nspans;
	size_t next_piece, next_prep;  /* atomics; next_piece counts spans where spans is set */
	size_t finished;               /* items whose bytes all moved; under mu */
	uint64_t done, total;          /* done: atomic */
	size_t chunk;
	int fill;                      /* loads through the mount ask the daemon to fill */
	struct tfs_pipe_src own;       /* the pipe's file, for items with no src of their own */
	struct tfs_load_files files;   /* loads: how each item's file is read */
	int profile;                   /* TFS_LOAD_PROFILE=1: time per stage, printed */
	uint64_t ns[ST_COUNT];         /* atomics: nanoseconds of all threads, per stage */
	uint64_t first_ns;             /* profile: when the first item finished; under mu */
	int stop;                      /* atomic: a failure or a cancel */
	int running;                   /* threads not yet finished; under mu */
	int err;                       /* the first failure; under mu */
	char msg[512];
};

/* ---- the per-stage profile (TFS_LOAD_PROFILE=1) ---- */
static const char *const stage_name[ST_COUNT] = {
	"prepare (creates, opens)", "file reads", "waits for H2D copies",
	"daemon fills", "writes through the mount", "host copies",
	"opening files (O_DIRECT)",
};

uint64_t tfs_pipe_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* When the process started using the library, near enough: the profile tells how long a
 * command took before its first tensor was in place. */
static uint64_t lib_start_ns;

__attribute__((constructor)) static void mark_start(void)
{
	lib_start_ns = tfs_pipe_now_ns();
}

/* Starts timing a stage: 0 when not profiling, so the clock is read only then. */
static uint64_t tick(const struct run *r)
{
	return r->profile ? tfs_pipe_now_ns() : 0;
}

static void tock(struct run *r, enum stage st, uint64_t t0)
{
	if (t0)
		__atomic_fetch_add(&r->ns[st], tfs_pipe_now_ns() - t0, __ATOMIC_RELAXED);
}

static void profile_print(const struct run *r, int nthreads, uint64_t start, uint64_t wall)
{
	double w = (double)wall * 1e-9;

	if (r->first_ns)
		fprintf(stderr, "tfs_load profile: first tensor in place %.1f ms after the "
			"copy began, %.1f ms after the process began\n",
			(double)(r->first_ns - start) * 1e-6,
			(double)(r->first_ns - lib_start_ns) * 1e-6);

	fprintf(stderr, "tfs_load profile: %s: %.3f s, %llu bytes, %.2f GB/s, %d copy "
		"threads, %zu pieces of %zu MiB, %s\n", r->p->fname ? r->p->fname : "-", w,
		(unsigned long long)r->total, w > 0 ? (double)r->total / w / 1e9 : 0.0,
		nthreads, r->npieces, r->chunk >> 20,
		r->files.nregs ? "DMA from the registered page cache" :
		r->files.ndfds ? "O_DIRECT reads" : "page-cache reads");
	for (int i = 0; i < ST_COUNT; i++)
		if (r->ns[i])
			fprintf(stderr, "tfs_load profile:   %-26s %8.3f thread-s (%5.1f%% of "
				"wall x copy threads)\n", stage_name[i], (double)r->ns[i] * 1e-9,
				w > 0 && nthreads > 0 ? 100.0 * (double)r->ns[i] * 1e-9 /
				(w * nthreads) : 0.0);
}

/* ---- failures ---- */
static void fail(struct run *r, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct run *r, int rc, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&r->mu);
	if (!r->err) {
		r->err = rc;
		va_start(ap, fmt);
		vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
		va_end(ap);
	}
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* A failure, or a cancel: seen by the copy threads at their next piece, the cancel's
 * message set by the calling thread once they have ended. */
static int stopped(struct run *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_RELAXED) || (r->p->cancel && *r->p->cancel);
}

/* len more bytes of item i moved; the last ones finish it. */
static void moved(struct run *r, size_t i, uint64_t len)
{
	struct tfs_pipe_item *it = &r->p->items[i];

	if (__atomic_sub_fetch(&it->left, len, __ATOMIC_ACQ_REL) != 0)
		return;
	if (r->p->finish)
		r->p->finish(r->p->arg, i);
	pthread_mutex_lock(&r->mu);
	if (r->finished++ == 0 && r->profile)
		r->first_ns = tfs_pipe_now_ns();
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* A save's bytes into the file: copied into its mapping (several threads fill one file at
 * once; pwrite calls on one file take turns on its inode lock), else written.
 * MADV_POPULATE_WRITE maps the piece first and says so where touching it would raise
 * SIGBUS (the file cut short by someone else, an I/O error): such a piece is written with
 * pwrite, which reports what went wrong. Kernels before 5.14 lack it (EINVAL): there the
 * blocks save.c allocated beforehand are what keeps the copy from faulting. */
static int file_put(struct run *r, const void *buf, size_t len, uint64_t foff)
{
	char *dst;
	int rc;

	if (!r->p->fmap)
		return tfs_pwrite_full(r->p->fd, buf, len, foff);
	dst = r->p->fmap + foff;
	rc = tfs_populate(dst, len, MADV_POPULATE_WRITE);
	if (rc && rc != -EINVAL)
		return tfs_pwrite_full(r->p->fd, buf, len, foff);
	memcpy(dst, buf, len);
	return 0;
}

static const struct tfs_pipe_src *src_of(struct run *r, size_t item)
{
	const struct tfs_pipe_src *s = r->p->items[item].src;

	return s ? s : &r->own;
}

/* A file-side failure: the load reads the file, the save writes it. */
static void fail_file(struct run *r, size_t item, int rc)
{
	const char *fname = src_of(r, item)->name;

	if (rc == -ENODATA)
		fail(r, -EBADMSG, "%s: read: the file is shorter than its header says: %s",
		     fname, tfs_strerror(EBADMSG));
	else
		fail(r, rc, "%s: %s: %s", fname, r->p->to_tensor ? "read" : "write",
		     tfs_strerror(rc));
}

/* ---- preparing threads ---- */
static void *prep_main(void *arg)
{
	struct run *r = arg;
	struct tfs_pipe *p = r->p;

	for (;;) {
		size_t i = __atomic_fetch_add(&r->next_prep, 1, __ATOMIC_RELAXED);
		int rc;

		if (i >= p->n)
			break;
		/* items are taken in order and finish about in order: wait for room */
		pthread_mutex_lock(&r->mu);
		while (i >= r->finished + TFS_PIPE_WINDOW && !r->stop)
			pthread_cond_wait(&r->cv, &r->mu);
		pthread_mutex_unlock(&r->mu);
		uint64_t t0 = tick(r);

		rc = stopped(r) ? -ECANCELED : p->prepare(p->arg, i);
		tock(r, ST_PREPARE, t0);
		if (rc && rc != -ECANCELED)
			fail(r, rc, "%s", tfs_errmsg());
		pthread_mutex_lock(&r->mu);
		p->items[i].state = rc ? rc : 1;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		if (!rc && p->items[i].bytes == 0)
			moved(r, i, 0);
	}
	pthread_mutex_lock(&r->mu);
	r->running--;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* ---- copy threads ---- */
struct worker {
	struct run *r;
	const struct tfs_cudart *cu;
	int dev;                       /* the device of stream/ev; -1: none yet */
	void *stream, *ev[NBUF];
	struct pinbuf buf[NBUF];
	int busy[NBUF];                /* a copy from/to buf[b] was queued */
	uint64_t wfoff[NBUF];          /* save: where buf[b] goes in the file */
	size_t wlen[NBUF];             /* the piece in buf[b]: its length and item */
	size_t witem[NBUF];
	unsigned k;
	char *fbuf;                    /* through FUSE */
	char *dbuf;                    /* direct reads not into a pinned buffer */
	int no_direct;                 /* the file system refused a direct read */
	int pipe[2];                   /* a load through FUSE by splice; -1: none yet */
	int no_splice;                 /* splice is not possible here: pread/pwrite */
	int no_fill;                   /* the daemon refused a fill: writes from then on */
};

/* Waits for buffer b's queued copy; a save then writes it out. */
static int drain(struct worker *w, int b)
{
	struct run *r = w->r;
	int e, rc;

	if (!w->busy[b])
		return 0;
	uint64_t t0 = tick(r);

	w->busy[b] = 0;
	e = w->cu->EventSynchronize(w->ev[b]);
	tock(r, ST_H2D_WAIT, t0);
	if (e) {
		fail(r, -EIO, "cudaMemcpyAsync: %s", w->cu->GetErrorString(e));
		return -EIO;
	}
	if (!r->p->to_tensor && (rc = file_put(r, w->buf[b].p, w->wlen[b], w->wfoff[b]))) {
		fail_file(r, w->witem[b], rc);
		return rc;
	}
	moved(r, w->witem[b], w->wlen[b]);
	return 0;
}

static void cuda_drop(struct worker *w)
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

static int cuda_setup(struct worker *w, int dev)
{
	struct run *r = w->r;
	int rc, e, prev;

	if (w->dev == dev)
		return 0;
	if (!w->cu && !(w->cu = tfs_cudart_get(&rc))) {
		fail(r, rc, "%s", tfs_errmsg());
		return rc;
	}
	cuda_drop(w);
	if ((rc = tfs_cuda_enter(w->cu, dev, &prev))) {
		fail(r, rc, "%s", tfs_errmsg());
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
			fail(r, rc, "%s", tfs_errmsg());
			return rc;
		}
	}
	w->dev = dev;
	return 0;
fail:
	fail(r, -EIO, "CUDA stream setup on device %d: %s", dev, w->cu->GetErrorString(e));
	return -EIO;
}

/* The worker's buffer for direct reads that land elsewhere (host memory, the mount):
 * NULL when out of memory (then the page cache serves). */
static char *direct_buf(struct worker *w)
{
	if (!w->dbuf && posix_memalign((void **)&w->dbuf, TFS_DIO_ALIGN,
				       w->r->chunk + TFS_DIO_PAD))
		w->dbuf = NULL;
	return w->dbuf;
}

/* Whether item's file is read directly by this worker. */
static int direct_for(const struct worker *w, size_t item)
{
	return w->r->files.dfd && w->r->files.dfd[item] >= 0 && !w->no_direct;
}

/* Reads len bytes of item's file at foff: with O_DIRECT into buf (aligned, len +
 * TFS_DIO_PAD bytes; *at where the bytes start in it) when the item's file is read
 * directly, else through the page cache into dst (*at = dst). A file system that refuses
 * the direct read sends this worker to the page cache from then on. 0 or -errno. */
static int read_piece(struct worker *w, size_t item, char *buf, char *dst, uint64_t foff,
		      size_t len, char **at)
{
	struct run *r = w->r;
	uint64_t t0 = tick(r);
	int rc;

	if (buf && direct_for(w, item)) {
		rc = tfs_dio_read(r->files.dfd[item], buf, foff, len, at);
		if (rc != -EINVAL) {
			tock(r, ST_READ, t0);
			return rc;
		}
		w->no_direct = 1;
		if (!dst) {
			tock(r, ST_READ, t0);
			return rc;
		}
	}
	rc = tfs_pread_full(src_of(r, item)->fd, dst, len, foff);
	*at = dst;
	tock(r, ST_READ, t0);
	return rc;
}

static int copy_cuda(struct worker *w, char *dev, const struct piece *pc, uint64_t foff)
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
			fail_file(r, pc->item, rc);
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
		fail(r, -EIO, "cudaMemcpyAsync: %s", w->cu->GetErrorString(e));
		return -EIO;
	}
	w->busy[b] = 1;
	return 0;
}

static int copy_host(struct worker *w, char *mem, const struct piece *pc, uint64_t foff)
{
	struct run *r = w->r;
	int rc;

	(void)tfs_populate(mem, pc->len, r->p->to_tensor ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
	if (r->p->to_tensor) {
		char *at, *buf = direct_for(w, pc->item) ? direct_buf(w) : NULL;

		rc = read_piece(w, pc->item, buf, mem, foff, pc->len, &at);
		if (!rc && at != mem) {
			uint64_t t0 = tick(r);

			memcpy(mem, at, pc->len);
			tock(r, ST_HOST_COPY, t0);
		}
	} else {
		rc = file_put(r, mem, pc->len, foff);
	}
	if (rc)
		fail_file(r, pc->item, rc);
	return rc;
}

/* One block of a load through the mount by splice: the file's page-cache pages go into
 * the pipe by reference and the kernel copies them once, into the FUSE request, where
 * pread + pwrite copy twice (1.5 GB/s for one thread that way on the H200). 0; 1 when
 * splice cannot serve here, nothing of the block written yet (the caller goes by
 * pread/pwrite from then on); -ENODATA when the file ended early; else a negative errno,
 * with *in_file saying which side failed. */
static int splice_block(struct worker *w, int in, uint64_t ioff, int out, uint64_t ooff,
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
static int fill_piece(struct worker *w, int tfd, const struct piece *pc, uint64_t foff)
{
	const struct tfs_pipe_src *s = src_of(w->r, pc->item);

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
 * a negative errno after fail(). */
static int sized(struct run *r, size_t i, int tfd)
{
	struct tfs_pipe_item *it = &r->p->items[i];
	struct stat st;

	if (!__atomic_exchange_n(&it->unsized, 0, __ATOMIC_ACQ_REL))
		return 0;
	if (fstat(tfd, &st)) {
		int rc = -errno;

		fail(r, rc, "a tensor of %s: %s", src_of(r, i)->name, tfs_strerror(-rc));
		return rc;
	}
	if ((uint64_t)st.st_size != it->bytes) {
		fail(r, -EIO, "a tensor of %s: made %llu bytes, expected %llu: %s",
		     src_of(r, i)->name, (unsigned long long)st.st_size,
		     (unsigned long long)it->bytes, tfs_strerror(EIO));
		return -EIO;
	}
	return 0;
}

static int copy_file(struct worker *w, int tfd, const struct piece *pc, uint64_t foff)
{
	struct run *r = w->r;
	int to_tensor = r->p->to_tensor;
	int in = to_tensor ? src_of(r, pc->item)->fd : tfd, out = to_tensor ? tfd : r->p->fd;
	int rc;

	/* Read directly: the whole piece in one request, then written through the mount
	 * (a cold file is read at the disk's speed, which the mount's writes outrun). */
	if (to_tensor && direct_for(w, pc->item) && direct_buf(w)) {
		char *at;
		uint64_t t0;

		rc = read_piece(w, pc->item, w->dbuf, NULL, foff, pc->len, &at);
		if (rc && rc != -EINVAL) {
			fail_file(r, pc->item, rc);
			return rc;
		}
		if (!rc && (rc = sized(r, pc->item, tfd)))
			return rc;
		if (!rc) {
			t0 = tick(r);
			rc = tfs_pwrite_full(tfd, at, pc->len, pc->off);
			tock(r, ST_MOUNT_WRITE, t0);
			if (rc)
				fail(r, rc, "a tensor of %s: write through the mount: %s",
				     src_of(r, pc->item)->name, tfs_strerror(rc));
			return rc ? rc : stopped(r) ? -ECANCELED : 0;
		}
	}
	/* Whatever the daemon refuses goes by write(), which reports a failure as the file's
	 * or the tensor's. EBUSY is for this piece only: as many fills run as it allows. */
	if (to_tensor && r->fill && !w->no_fill) {
		uint64_t t0 = tick(r);

		rc = fill_piece(w, tfd, pc, foff);
		tock(r, ST_FILL, t0);
		if (rc == 0)
			return stopped(r) ? -ECANCELED : 0;
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
				fail(r, -ENOMEM, "%s", tfs_strerror(ENOMEM));
				return -ENOMEM;
			}
			in_file = to_tensor;
			if (!(rc = tfs_pread_full(in, w->fbuf, len, ioff))) {
				in_file = !to_tensor;
				rc = to_tensor ? tfs_pwrite_full(out, w->fbuf, len, ooff)
					       : file_put(r, w->fbuf, len, ooff);
			}
		}
		if (rc && in_file)
			fail_file(r, pc->item, rc);
		else if (rc && to_tensor)
			fail(r, rc, "a tensor of %s: write through the mount: %s",
			     src_of(r, pc->item)->name,
			     tfs_strerror(rc));
		else if (rc)
			fail(r, rc == -ENODATA ? -EAGAIN : rc,
			     "a tensor of %s: read through the mount: %s", r->p->fname,
			     tfs_strerror(rc == -ENODATA ? EAGAIN : rc));
		if (rc)
			return rc;
		if (stopped(r))
			return -ECANCELED;
	}
	return 0;
}

static void *copy_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->r;
	struct tfs_pipe *p = r->p;

	size_t k = 0, end = 0;         /* the pieces of this thread's span still to do */

	while (!stopped(r)) {
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
		if (it->state < 0 || stopped(r))
			break;
		foff = it->foff + pc->off;
		if (!it->t) {
			if (!(rc = copy_file(w, it->fd, pc, foff)))
				moved(r, pc->item, pc->len);
		} else if (tfs_tensor_on_host(it->t)) {
			if (!(rc = copy_host(w, (char *)it->t->data + pc->off, pc, foff)))
				moved(r, pc->item, pc->len);
		} else if (!(rc = cuda_setup(w, it->t->meta.device))) {
			rc = copy_cuda(w, (char *)it->t->data + pc->off, pc, foff);   /* moved() at drain */
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

static size_t chunk_size(int via_file)
{
	const char *s = getenv("TFS_LOAD_CHUNK_MB");
	long mb = s ? strtol(s, NULL, 10) : 0;

	if (mb > 0 && mb <= 256)
		return (size_t)mb << 20;
	/* Mapped: 4 MiB, the best of 4-32 MiB with 8 threads on the H200. Through the files
	 * each piece is one fill, a round trip the daemon pipelines inside (its reads overlap
	 * its DMAs only within one request): 64 MiB with 16 threads made 47.8 GB/s on the
	 * H100 against 39.5 for 16 MiB (tests/bench/RESULTS-gpu.md). */
	return (size_t)(via_file ? 64 : 4) << 20;
}

static int cut(struct run *r)
{
	struct tfs_pipe *p = r->p;
	size_t n = 0, k = 0;

	for (size_t i = 0; i < p->n; i++)
		n += (size_t)((p->items[i].bytes + r->chunk - 1) / r->chunk);
	if (n && !(r->pieces = calloc(n, sizeof(*r->pieces))))
		return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
	for (size_t i = 0; i < p->n; i++) {
		r->total += p->items[i].bytes;
		for (uint64_t off = 0; off < p->items[i].bytes; off += r->chunk) {
			uint64_t left = p->items[i].bytes - off;

			r->pieces[k++] = (struct piece){ i, off, left < r->chunk ? left : r->chunk };
		}
	}
	r->npieces = n;
	return 0;
}

/* Spans for a save into a mapping (see the top of this file): about an equal share of the
 * bytes per thread, at most 1 GiB (so threads that finish early take more), and at most
 * TFS_PIPE_WINDOW / threads tensors. */
static int cut_spans(struct run *r, int threads)
{
	uint64_t share = (r->total + (uint64_t)threads - 1) / (uint64_t)threads, bytes = 0;
	size_t max_items = TFS_PIPE_WINDOW / (size_t)threads, items = 0, n = 0;

	if (share > (1ull << 30))
		share = 1ull << 30;
	if (max_items < 1)
		max_items = 1;
	if (!(r->spans = calloc(r->npieces + 1, sizeof(*r->spans))))
		return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
	for (size_t k = 0; k < r->npieces; k++) {
		int new_item = k == 0 || r->pieces[k].item != r->pieces[k - 1].item;

		if (k == 0 || bytes >= share || (new_item && items >= max_items)) {
			r->spans[n++] = k;
			bytes = 0;
			items = 0;
		}
		bytes += r->pieces[k].len;
		items += new_item;
	}
	r->spans[n] = r->npieces;
	r->nspans = n;
	return 0;
}


int tfs_pipe_run(struct tfs_pipe *p)
{
	struct run r = { .p = p, .chunk = chunk_size(p->via_file),
			 .own = { .fd = p->fd, .name = p->fname } };
	struct worker *w = NULL;
	pthread_t *th = NULL;
	int nthreads = p->threads, nprep = 0, started = 0, rc;
	uint64_t t_start = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	/* A save into a mapping gains from 16 (9.8 against 8.0 GB/s for tensorctl save on the
	 * H200, tests/bench/RESULTS-gpu.md): its threads fault the file's pages in, and
	 * through the files each also waits on its FUSE reads. Writes by pwrite take turns.
	 * Daemon fills: one page-cache reader moves ~3.5 GB/s, so the link needs 12 of them
	 * (the daemon has 16 staging slots per GPU; 12 beat 8 and 16 on the H100). */
	if (nthreads <= 0) {
		int def = p->fmap ? 16 : p->via_file ? 12 : 8;

		nthreads = cpus > 0 && cpus < def ? (int)cpus : def;
	}
	if (nthreads > MAX_THREADS)
		nthreads = MAX_THREADS;
	if (p->to_tensor) {
		const char *env = getenv("TFS_LOAD_FILL");
		struct stat st;

		/* with items from other files only, the pipe has no file of its own */
		r.fill = !(env && !strcmp(env, "0")) && (p->fd < 0 || fstat(p->fd, &st) == 0);
		if (r.fill && p->fd >= 0) {
			r.own.dev = (uint64_t)st.st_dev;
			r.own.ino = (uint64_t)st.st_ino;
		}
	}
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	r.profile = getenv("TFS_LOAD_PROFILE") && !strcmp(getenv("TFS_LOAD_PROFILE"), "1");
	if (r.profile)
		t_start = tfs_pipe_now_ns();
	for (size_t i = 0; i < p->n; i++) {
		p->items[i].state = p->prepare ? 0 : 1;
		p->items[i].left = p->items[i].bytes;
	}
	for (size_t i = 0; i < p->n && !p->prepare; i++)
		if (p->items[i].bytes == 0)
			moved(&r, i, 0);
	if (p->prepare) {
		/* Eight: with a load's creates sent by batches, what is left per tensor (its
		 * open, by name) runs in parallel; 4, 8 and 12 threads loaded 614 tensors of
		 * 1.7 GB in 95-102, 75-77 and 78-90 ms on an H200
		 * (tests/bench/RESULTS-load-fixed.md).
		 * TFS_LOAD_PREP (1-32) sets another count, for measurement. */
		const char *e = getenv("TFS_LOAD_PREP");
		int want = e && atoi(e) >= 1 && atoi(e) <= 32 ? atoi(e) : 8;

		nprep = p->n < (size_t)want ? (int)p->n : want;
	}
	if ((rc = cut(&r)))
		goto out;
	{
		uint64_t t0 = tick(&r);

		rc = tfs_load_files_open(&r.files, p, &r.own, r.profile);
		tock(&r, ST_REGISTER, t0);
		if (rc)
			goto out;
	}
	if ((size_t)nthreads > r.npieces)
		nthreads = r.npieces ? (int)r.npieces : 0;
	if (p->fmap && nthreads > 1 && (rc = cut_spans(&r, nthreads)))
		goto out;
	th = calloc((size_t)(nthreads + nprep) + 1, sizeof(*th));
	w = calloc((size_t)nthreads + 1, sizeof(*w));
	if (!th || !w) {
		rc = tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
		goto out;
	}
	for (int i = 0; i < nprep + nthreads; i++) {
		int e;

		pthread_mutex_lock(&r.mu);
		r.running++;
		pthread_mutex_unlock(&r.mu);
		if (i < nprep) {
			e = pthread_create(&th[i], NULL, prep_main, &r);
		} else {
			w[i - nprep] = (struct worker){ .r = &r, .dev = -1, .pipe = { -1, -1 } };
			e = pthread_create(&th[i], NULL, copy_main, &w[i - nprep]);
		}
		if (e) {
			pthread_mutex_lock(&r.mu);
			r.running--;
			pthread_mutex_unlock(&r.mu);
			fail(&r, -e, "pthread_create: %s", tfs_strerror(e));
			/* items nobody will prepare count as failed, so no copy thread waits */
			if (i < nprep && started == 0) {
				for (size_t j = 0; j < p->n; j++)
					p->items[j].state = -ECANCELED;
			}
			break;
		}
		started++;
	}
	/* the calling thread reports progress and watches for a cancel */
	pthread_mutex_lock(&r.mu);
	while (r.running > 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&r.cv, &r.mu, &ts);
		if (p->cancel && *p->cancel && !r.err) {
			pthread_mutex_unlock(&r.mu);
			fail(&r, -EINTR, "interrupted: %s", tfs_strerror(EINTR));
			pthread_mutex_lock(&r.mu);
		}
		if (p->progress) {
			pthread_mutex_unlock(&r.mu);
			p->progress(p->progress_arg, __atomic_load_n(&r.done, __ATOMIC_RELAXED), r.total);
			pthread_mutex_lock(&r.mu);
		}
	}
	pthread_mutex_unlock(&r.mu);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (p->progress && !r.err)
		p->progress(p->progress_arg, r.done, r.total);
	/* items left unprepared after a failure count as failed, never ready */
	for (size_t i = 0; i < p->n; i++)
		if (p->items[i].state == 0)
			p->items[i].state = -ECANCELED;
	rc = r.err ? tfs_seterr(r.err, "%s", r.msg) : 0;
	if (r.profile)
		profile_print(&r, nthreads, t_start, tfs_pipe_now_ns() - t_start);
out:
	tfs_load_files_close(&r.files);
	pthread_cond_destroy(&r.cv);
	pthread_mutex_destroy(&r.mu);
	free(r.pieces);
	free(r.spans);
	free(th);
	free(w);
	return rc;
}
