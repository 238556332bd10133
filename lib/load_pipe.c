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
 * TFS_LOAD_PROFILE=1 times each stage and prints the sums at the end. The copy threads,
 * and how each moves a piece, are load_copy.c's; what they share with this file,
 * load_run.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client_internal.h"
#include "fileio.h"
#include "load_files.h"
#include "load_copy.h"
#include "load_pipe.h"
#include "load_run.h"

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
void tfs_run_fail(struct run *r, int rc, const char *fmt, ...)
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
int tfs_run_stopped(struct run *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_RELAXED) || (r->p->cancel && *r->p->cancel);
}

/* len more bytes of item i moved; the last ones finish it. */
void tfs_run_moved(struct run *r, size_t i, uint64_t len)
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
int tfs_run_file_put(struct run *r, const void *buf, size_t len, uint64_t foff)
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

const struct tfs_pipe_src *tfs_run_src(struct run *r, size_t item)
{
	const struct tfs_pipe_src *s = r->p->items[item].src;

	return s ? s : &r->own;
}

/* A file-side failure: the load reads the file, the save writes it. */
void tfs_run_fail_file(struct run *r, size_t item, int rc)
{
	const char *fname = tfs_run_src(r, item)->name;

	if (rc == -ENODATA)
		tfs_run_fail(r, -EBADMSG, "%s: read: the file is shorter than its header says: %s",
		     fname, tfs_strerror(EBADMSG));
	else
		tfs_run_fail(r, rc, "%s: %s: %s", fname, r->p->to_tensor ? "read" : "write",
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
		uint64_t t0 = tfs_run_tick(r);

		rc = tfs_run_stopped(r) ? -ECANCELED : p->prepare(p->arg, i);
		tfs_run_tock(r, ST_PREPARE, t0);
		if (rc && rc != -ECANCELED)
			tfs_run_fail(r, rc, "%s", tfs_errmsg());
		pthread_mutex_lock(&r->mu);
		p->items[i].state = rc ? rc : 1;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		if (!rc && p->items[i].bytes == 0)
			tfs_run_moved(r, i, 0);
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
	struct tfs_copy_worker *w = NULL;
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
			tfs_run_moved(&r, i, 0);
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
		uint64_t t0 = tfs_run_tick(&r);

		rc = tfs_load_files_open(&r.files, p, &r.own, r.profile);
		tfs_run_tock(&r, ST_REGISTER, t0);
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
			w[i - nprep] = (struct tfs_copy_worker){ .r = &r, .dev = -1, .pipe = { -1, -1 } };
			e = pthread_create(&th[i], NULL, tfs_copy_main, &w[i - nprep]);
		}
		if (e) {
			pthread_mutex_lock(&r.mu);
			r.running--;
			pthread_mutex_unlock(&r.mu);
			tfs_run_fail(&r, -e, "pthread_create: %s", tfs_strerror(e));
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
			tfs_run_fail(&r, -EINTR, "interrupted: %s", tfs_strerror(EINTR));
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
