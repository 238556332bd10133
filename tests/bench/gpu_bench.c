/* Measurements for tests/bench/gpu_bench.sh. Each mode prints table rows
 * "| what | threads | read GB/s | write GB/s |" or "| what | value |".
 *
 *   gpu_bench memcpy SIZE_MiB            pinned cudaMemcpyAsync ceiling, 1 MiB blocks, 1 and 8
 *                                        streams (one thread, buffer and stream each)
 *   gpu_bench io SIZE_MiB {LABEL FILE LABEL8}...  for each mount (up to 4), pread/pwrite
 *                                        of FILE (made SIZE_MiB long) in 1 MiB blocks, 1 and 8
 *                                        threads on disjoint slices; unless LABEL8 is "", also
 *                                        8 threads on 8 files of SIZE/8; the mounts' passes
 *                                        alternate (do_io)
 *   gpu_bench meta DIR N THREADS [dirs]  create -> set user.tensor.shape -> unlink, per second;
 *                                        dirs: each thread in a directory of its own
 *   gpu_bench alloc DIR N                N tensors of log-uniform sizes 4 KiB..64 MiB shaped
 *                                        with setxattr; statfs used / requested
 * Built with -DWITH_CUDA (and cudart) for the memcpy mode only.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#ifdef WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include "benchutil.h"

#define MiB (1024ull * 1024)
#define BLK MiB
#define REPS 3

static void die(const char *what)
{
	fprintf(stderr, "gpu_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- run fn on n threads, each with its own index; returns wall seconds ---- */
struct job {
	int idx, n;
	void *ctx;
	int (*fn)(struct job *);
	int rc;
};

static void *job_main(void *arg)
{
	struct job *j = arg;

	j->rc = j->fn(j);
	return NULL;
}

static double run_threads(int n, void *ctx, int (*fn)(struct job *))
{
	pthread_t th[64];
	struct job jobs[64];
	double t0, t1;
	int i;

	for (i = 0; i < n; i++) {
		jobs[i] = (struct job){ .idx = i, .n = n, .ctx = ctx, .fn = fn };
	}
	t0 = bench_now();
	for (i = 0; i < n; i++)
		pthread_create(&th[i], NULL, job_main, &jobs[i]);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	t1 = bench_now();
	for (i = 0; i < n; i++)
		if (jobs[i].rc) {
			fprintf(stderr, "gpu_bench: thread %d failed (%d)\n", i, jobs[i].rc);
			exit(1);
		}
	return t1 - t0;
}

/* ---- memcpy ceiling ---- */
#ifdef WITH_CUDA
struct mc {
	uint64_t size;
	uint8_t *dev;
	int dir;    /* 0 H2D, 1 D2H */
	uint8_t *host[8];
	cudaStream_t st[8];
};

static int mc_fn(struct job *j)
{
	struct mc *m = j->ctx;
	uint64_t slice = m->size / (uint64_t)j->n, off;

	cudaSetDevice(0);
	for (off = 0; off < slice; off += BLK) {
		uint8_t *d = m->dev + (uint64_t)j->idx * slice + off;
		uint8_t *h = m->host[j->idx] + (off % (64 * MiB));
		cudaError_t e = m->dir ? cudaMemcpyAsync(h, d, BLK, cudaMemcpyDeviceToHost, m->st[j->idx])
				       : cudaMemcpyAsync(d, h, BLK, cudaMemcpyHostToDevice, m->st[j->idx]);
		if (e != cudaSuccess)
			return 1;
	}
	return cudaStreamSynchronize(m->st[j->idx]) != cudaSuccess;
}

static int do_memcpy(uint64_t size)
{
	struct mc m = { .size = size };
	int i, t, r;
	int nth[2] = { 1, 8 };

	if (cudaMalloc((void **)&m.dev, size) != cudaSuccess)
		return 1;
	for (i = 0; i < 8; i++) {
		if (cudaHostAlloc((void **)&m.host[i], 64 * MiB, cudaHostAllocDefault) != cudaSuccess ||
		    cudaStreamCreateWithFlags(&m.st[i], cudaStreamNonBlocking) != cudaSuccess)
			return 1;
		memset(m.host[i], i, 64 * MiB);
	}
	for (t = 0; t < 2; t++) {
		double best[2] = { 0, 0 };

		for (m.dir = 0; m.dir < 2; m.dir++)
			for (r = 0; r < REPS + 1; r++) {   /* first round warms up */
				double s = run_threads(nth[t], &m, mc_fn);
				double g = (double)size / s / 1e9;

				if (r && g > best[m.dir])
					best[m.dir] = g;
			}
		printf("| pinned cudaMemcpyAsync ceiling (no FUSE) | %d | %.2f | %.2f |\n", nth[t],
		       best[1], best[0]);
	}
	return 0;
}
#endif

/* ---- file I/O through the mount ---- */
struct io {
	int fd[8];
	int per_file;       /* thread i uses its own file fd[i], from offset 0 */
	uint64_t size;
	int write;
};

static int io_fn(struct job *j)
{
	struct io *o = j->ctx;
	uint64_t slice = o->size / (uint64_t)j->n, off;
	uint8_t *buf = aligned_alloc(4096, BLK);

	if (!buf)
		return 1;
	memset(buf, 0x5a + j->idx, BLK);
	for (off = 0; off < slice; off += BLK) {
		int fd = o->per_file ? o->fd[j->idx] : o->fd[0];
		off_t at = (off_t)((o->per_file ? 0 : (uint64_t)j->idx * slice) + off);
		ssize_t n = o->write ? pwrite(fd, buf, BLK, at) : pread(fd, buf, BLK, at);

		if (n != (ssize_t)BLK) {
			fprintf(stderr, "gpu_bench: %s at %lld: %zd %s\n", o->write ? "pwrite" : "pread",
				(long long)at, n, strerror(errno));
			free(buf);
			return 1;
		}
	}
	free(buf);
	return 0;
}

/* One mount's files: one of size bytes, and 8 of size/8 bytes, one per thread. */
struct io_set {
	const char *label, *label8;
	char path[4096];
	struct io one, eight;
	double best[3][2];           /* 1 thread, 8 threads (one file), 8 files; read, write */
};

static void io_open(struct io_set *x, uint64_t size)
{
	const char *path = x->path;
	char p8[4096 + 16];

	x->one = (struct io){ .size = size };
	x->eight = (struct io){ .size = size, .per_file = 1 };
	x->one.fd[0] = open(path, O_RDWR | O_CREAT, 0644);
	if (x->one.fd[0] < 0)
		die(path);
	if (ftruncate(x->one.fd[0], (off_t)size))
		die("ftruncate");
	for (int i = 0; i < 8; i++) {
		snprintf(p8, sizeof(p8), "%s.%d", path, i);
		x->eight.fd[i] = open(p8, O_RDWR | O_CREAT, 0644);
		if (x->eight.fd[i] < 0)
			die(p8);
		if (ftruncate(x->eight.fd[i], (off_t)(size / 8)))
			die("ftruncate");
	}
}

static void io_close(struct io_set *x)
{
	char p8[4096 + 16];

	close(x->one.fd[0]);
	unlink(x->path);
	for (int i = 0; i < 8; i++) {
		snprintf(p8, sizeof(p8), "%s.%d", x->path, i);
		close(x->eight.fd[i]);
		unlink(p8);
	}
}

/* For each mount: one file of size bytes, 1 and 8 threads on disjoint slices; then (with
 * label8) 8 files of size/8 bytes, one thread each: FUSE takes the inode lock for each
 * direct-I/O write (libfuse 3.14 cannot ask for parallel direct writes), so 8 writers of
 * one file take turns. Each figure is the best of REPS passes, and the mounts' passes of
 * one case are taken in turn (host, cuda, host, cuda...): this VM's host memory bandwidth
 * drifts by tens of percent between minutes, and a comparison should not depend on which
 * mount ran first. */
static int do_io(int nsets, struct io_set *xs, uint64_t size)
{
	static const int nth[3] = { 1, 8, 8 };
	int c, w, r, i;

	for (i = 0; i < nsets; i++)
		io_open(&xs[i], size);
	for (c = 0; c < 3; c++)
		for (w = 0; w < 2; w++)
			for (r = 0; r < REPS; r++)
				for (i = 0; i < nsets; i++) {
					struct io *o = c == 2 ? &xs[i].eight : &xs[i].one;
					double g;

					if (c == 2 && !xs[i].label8)
						continue;
					o->write = w;
					g = (double)size / run_threads(nth[c], o, io_fn) / 1e9;
					if (g > xs[i].best[c][w])
						xs[i].best[c][w] = g;
				}
	for (i = 0; i < nsets; i++) {
		for (c = 0; c < 3; c++)
			if (c < 2 || xs[i].label8)
				printf("| %s | %d | %.2f | %.2f |\n", c < 2 ? xs[i].label : xs[i].label8,
				       nth[c], xs[i].best[c][0], xs[i].best[c][1]);
		io_close(&xs[i]);
	}
	return 0;
}

/* ---- create -> shape -> unlink ---- */
struct meta {
	const char *dir;
	int n, dirs;
};

static int meta_fn(struct job *j)
{
	struct meta *m = j->ctx;
	char path[4096];
	int i, fd;

	for (i = j->idx; i < m->n; i += j->n) {
		if (m->dirs)
			snprintf(path, sizeof(path), "%s/d%d/m%d", m->dir, j->idx, i);
		else
			snprintf(path, sizeof(path), "%s/m%d", m->dir, i);
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0)
			return 1;
		close(fd);
		if (setxattr(path, "user.tensor.shape", "[1024]", 6, 0))
			return 2;
		if (unlink(path))
			return 3;
	}
	return 0;
}

/* dirs: the kernel holds a directory's lock across each create and unlink in it (on any
 * filesystem), so threads in one directory take turns for those two requests. */
static int do_meta(const char *dir, int n, int threads, int dirs)
{
	struct meta m = { dir, n, dirs };
	char path[4096];
	double s;

	for (int i = 0; dirs && i < threads; i++) {
		snprintf(path, sizeof(path), "%s/d%d", dir, i);
		if (mkdir(path, 0755) && errno != EEXIST)
			return 1;
	}
	s = run_threads(threads, &m, meta_fn);
	printf("| create -> shape [1024] -> unlink, %d threads%s | %.0f /s |\n", threads,
	       dirs ? ", a directory each" : "", n / s);
	for (int i = 0; dirs && i < threads; i++) {
		snprintf(path, sizeof(path), "%s/d%d", dir, i);
		rmdir(path);
	}
	return 0;
}

/* ---- allocation efficiency ---- */
/* 2^x for 0 <= x < 64 without libm (the Makefile links no -lm): integer part by shift,
 * fraction by the series of e^(f ln 2). */
static double pow2(double x)
{
	int k = (int)x;
	double f = (x - k) * 0.6931471805599453, term = 1, sum = 1;
	int i;

	for (i = 1; i < 30; i++) {
		term *= f / i;
		sum += term;
	}
	return (double)(1ull << k) * sum;
}

static uint64_t used_bytes(const char *dir)
{
	struct statvfs sv;

	if (statvfs(dir, &sv))
		die("statvfs");
	return (uint64_t)(sv.f_blocks - sv.f_bfree) * sv.f_frsize;
}

static int do_alloc(const char *dir, int n)
{
	uint64_t u0 = used_bytes(dir), u1, req = 0, x = 88172645463325252ull;
	char path[4096], shape[64];
	double t0, t1;
	int i, fd, fails = 0;

	t0 = bench_now();
	for (i = 0; i < n; i++) {
		double r;
		uint64_t bytes;

		x ^= x << 13; x ^= x >> 7; x ^= x << 17;      /* xorshift64 */
		r = (double)(x >> 11) / 9007199254740992.0;
		bytes = (uint64_t)(4096.0 * pow2(r * 14.0));    /* 4 KiB .. 64 MiB */
		snprintf(path, sizeof(path), "%s/a%05d", dir, i);
		fd = open(path, O_CREAT | O_WRONLY, 0644);
		if (fd < 0)
			die(path);
		close(fd);
		snprintf(shape, sizeof(shape), "[%" PRIu64 "]", bytes);
		if (setxattr(path, "user.tensor.shape", shape, strlen(shape), 0)) {
			fails++;
			continue;
		}
		req += bytes;
	}
	t1 = bench_now();
	u1 = used_bytes(dir);
	printf("| %d tensors, log-uniform 4 KiB..64 MiB: requested | %.2f GiB |\n", n,
	       (double)req / (double)(1024 * MiB));
	printf("| statfs used (reserved on the GPU) | %.2f GiB |\n", (double)(u1 - u0) / (double)(1024 * MiB));
	printf("| reserved / requested | %.4f |\n", (double)(u1 - u0) / (double)req);
	printf("| shaping rate for these (alloc + zero-fill) | %.0f /s%s |\n", n / (t1 - t0),
	       fails ? " (some failed)" : "");
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/a%05d", dir, i);
		unlink(path);
	}
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "memcpy")) {
#ifdef WITH_CUDA
		return do_memcpy(strtoull(argv[2], NULL, 0) * MiB);
#else
		fprintf(stderr, "gpu_bench: built without CUDA\n");
		return 2;
#endif
	}
	if (argc >= 6 && !strcmp(argv[1], "io") && (argc - 3) % 3 == 0 && argc <= 3 + 3 * 4) {
		struct io_set xs[4] = { 0 };
		int n = (argc - 3) / 3;

		for (int i = 0; i < n; i++) {
			xs[i].label = argv[3 + 3 * i];
			snprintf(xs[i].path, sizeof(xs[i].path), "%s", argv[4 + 3 * i]);
			xs[i].label8 = *argv[5 + 3 * i] ? argv[5 + 3 * i] : NULL;
		}
		return do_io(n, xs, strtoull(argv[2], NULL, 0) * MiB);
	}
	if (argc >= 5 && !strcmp(argv[1], "meta"))
		return do_meta(argv[2], atoi(argv[3]), atoi(argv[4]),
			       argc >= 6 && !strcmp(argv[5], "dirs"));
	if (argc >= 4 && !strcmp(argv[1], "alloc"))
		return do_alloc(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: see the top of tests/bench/gpu_bench.c\n");
	return 2;
}
