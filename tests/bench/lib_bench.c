/* Measurements of libtensorfs for tests/bench/lib_bench.sh (issue 4). Each mode prints
 * Markdown table rows.
 *
 *   lib_bench open PATH N NCOLD   tfs_open(PATH) -> tfs_tensor_data, then tfs_close, timed
 *                                 apart: N times warm (PATH is held open for the whole run,
 *                                 so the per-process handle cache keeps the IPC mapping and
 *                                 the descriptor is shared; then N times with only the
 *                                 mapping held, from its metadata) and NCOLD times cold (nothing held: every open maps
 *                                 the handle, every close unmaps it); the same from the
 *                                 metadata JSON in hand (tfs_open_meta: the library alone);
 *                                 then the system calls of tfs_open one by one. Rows:
 *                                 "| what | n | p50 µs | p99 µs | mean µs |"
 *   lib_bench first DIR N         the first tfs_open(path) in this process of each of N new
 *                                 tensors DIR/first.<i> (f32 [1048576]), nothing remembered
 *                                 or mapped, as a worker opening its weights once; then the
 *                                 same tensors from their metadata in hand (tfs_open_meta),
 *                                 and the steps of such an open one by one on N more. One
 *                                 tensor opened before, untimed, starts CUDA. Removes them
 *                                 after. Rows as for open.
 *   lib_bench copy PATH           tfs_write / tfs_read of the whole tensor PATH in 1 MiB,
 *                                 64 MiB and whole-tensor pieces from/to a pinned caller
 *                                 buffer, beside cudaMemcpy of the same pieces between the same
 *                                 pinned buffer and a plain cudaMalloc buffer of the same size
 *                                 (the ceiling), then the same with a pageable buffer. Rows:
 *                                 "| what | pieces | tfs GB/s | ceiling GB/s | tfs / ceiling |"
 *
 * Built by make without CUDA (then the caller buffer is malloc'd and the ceiling is memcpy:
 * enough for the host backend); lib_bench.sh builds it with -DWITH_CUDA and cudart for the
 * cuda backend.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#ifdef WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include "benchutil.h"
#include "tensorfs.h"

#define MiB ((uint64_t)1024 * 1024)
#define WARMUP 200
#define REPS 7              /* copy passes per figure; the median is reported */

static void die_tfs(const char *what, int rc)
{
	fprintf(stderr, "lib_bench: %s: %s (%s)\n", what, tfs_strerror(rc), tfs_errmsg());
	exit(1);
}

#ifdef WITH_CUDA
static void check_cuda(const char *what, cudaError_t e)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "lib_bench: %s: %s\n", what, cudaGetErrorString(e));
		exit(1);
	}
}
#endif

/* Nearest-rank percentile of sorted v[0..n): the smallest value with at least q of the
 * samples at or below it. */
static double pct(const double *v, int n, double q)
{
	int k = (int)((double)n * q + 0.999999);

	if (k < 1)
		k = 1;
	return v[k > n ? n - 1 : k - 1];
}

static void print_lat(const char *label, double *us, int n)
{
	double sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += us[i];
	qsort(us, (size_t)n, sizeof(*us), bench_cmp_double);
	printf("| %s | %d | %.1f | %.1f | %.1f |\n", label, n, pct(us, n, 0.50), pct(us, n, 0.99),
	       sum / n);
}

/* ---- open by path ---- */

/* n rounds of open -> pointer, close; the first `warmup` rounds are not recorded (they
 * fill the dentry and attribute caches of the kernel and, when warm, nothing else). With
 * json, the rounds open from that metadata (tfs_open_meta) instead of the path: the
 * library's own share, with no FUSE request, as a consumer that got the metadata some
 * other way (the queue, its own cache) pays it; it is also what torch's rebuild of an
 * already received handle tuple does. */
static void open_rounds(const char *path, const char *json, int warmup, int n, double *open_us,
			double *close_us)
{
	tfs_tensor *t;
	double t0, t1, t2;
	void *p;
	int i, rc;

	for (i = -warmup; i < n; i++) {
		t0 = bench_now();
		rc = json ? tfs_open_meta(json, strlen(json), &t) : tfs_open(path, O_RDWR, &t);
		if (rc)
			die_tfs(json ? "tfs_open_meta" : path, rc);
		p = tfs_tensor_data(t);
		t1 = bench_now();
		if (!p) {
			fprintf(stderr, "lib_bench: %s is empty: shape it first\n", path);
			exit(1);
		}
		rc = tfs_close(t);
		t2 = bench_now();
		if (rc)
			die_tfs("tfs_close", rc);
		if (i >= 0) {
			open_us[i] = (t1 - t0) * 1e6;
			close_us[i] = (t2 - t1) * 1e6;
		}
	}
}

/* The system calls tfs_open and tfs_close make, timed one by one, to tell the daemon's
 * share from the library's. A warm tfs_open of an unchanged tensor makes the open(2) and
 * the fstat, and skips the fgetxattr (lib/meta_cache.c). */
static void syscall_rounds(const char *path, int n, double *us[4])
{
	static const char *const what[4] = {
		"breakdown: open(2) (FUSE OPEN; LOOKUP too with -o entry_timeout=0)",
		"breakdown: fstat (answered by the kernel from the attributes it keeps)",
		"breakdown: fgetxattr(user.tensor.meta) (skipped while the metadata is remembered)",
		"breakdown: close(2) (no flush: the daemon has none; release is asynchronous)",
	};
	char buf[4096];
	struct stat st;
	double t[5];
	int i, k, fd;

	for (i = -WARMUP; i < n; i++) {
		t[0] = bench_now();
		fd = open(path, O_RDWR | O_CLOEXEC);
		t[1] = bench_now();
		if (fd < 0 || fstat(fd, &st))
			goto fail;
		t[2] = bench_now();
		if (fgetxattr(fd, "user.tensor.meta", buf, sizeof(buf)) < 0)
			goto fail;
		t[3] = bench_now();
		close(fd);
		t[4] = bench_now();
		for (k = 0; i >= 0 && k < 4; k++)
			us[k][i] = (t[k + 1] - t[k]) * 1e6;
	}
	for (k = 0; k < 4; k++)
		print_lat(what[k], us[k], n);
	return;
fail:
	fprintf(stderr, "lib_bench: %s: %s\n", path, strerror(errno));
	exit(1);
}

static int do_open(const char *path, int n, int ncold)
{
	int nmax = n > ncold ? n : ncold;
	double *o = malloc(sizeof(double) * (size_t)nmax), *c = malloc(sizeof(double) * (size_t)nmax);
	double *x = malloc(sizeof(double) * (size_t)nmax), *y = malloc(sizeof(double) * (size_t)nmax);
	struct tfs_tensor_info info;
	tfs_tensor *keep;
	char what[160], json[4096];
	const char *ptr;
	ssize_t len;
	int rc;

	if (!o || !c || !x || !y || n < 1 || ncold < 1) {
		fprintf(stderr, "lib_bench: bad counts or out of memory\n");
		return 1;
	}
	/* A held tensor is what makes the rounds warm: its cache entry has users >= 1, so the
	 * rounds' opens find the mapping and their closes never unmap it. Held by path, its
	 * descriptor is shared too (lib/fd_share.c), as torch's storage cache answers a
	 * rebuild of a storage the process holds; held from its metadata, each round opens
	 * the file (one FUSE OPEN). */
	if ((rc = tfs_open(path, O_RDWR, &keep)))
		die_tfs(path, rc);
	if ((rc = tfs_tensor_get_info(keep, &info)))
		die_tfs("tfs_tensor_get_info", rc);
	ptr = info.on_host ? "host pointer" : "device pointer";
	len = getxattr(path, "user.tensor.meta", json, sizeof(json) - 1);
	if (len < 0) {
		fprintf(stderr, "lib_bench: %s: user.tensor.meta: %s\n", path, strerror(errno));
		return 1;
	}
	json[len] = 0;
	open_rounds(path, NULL, WARMUP, n, o, c);
	snprintf(what, sizeof(what), "tensorfs: tfs_open(path) -> %s, warm, the tensor held open "
		 "(descriptor shared, no FUSE request)", ptr);
	print_lat(what, o, n);
	print_lat("tensorfs: tfs_close, warm, the tensor held open", c, n);
	if ((rc = tfs_close(keep)))
		die_tfs("tfs_close", rc);
	if ((rc = tfs_open_meta(json, strlen(json), &keep)))
		die_tfs("tfs_open_meta", rc);
	open_rounds(path, NULL, WARMUP, n, o, c);
	snprintf(what, sizeof(what), "tensorfs: tfs_open(path) -> %s, warm, only the mapping held "
		 "(one FUSE OPEN)", ptr);
	print_lat(what, o, n);
	print_lat("tensorfs: tfs_close, warm, only the mapping held", c, n);
	open_rounds(path, json, WARMUP, n, o, c);
	snprintf(what, sizeof(what), "tensorfs: tfs_open_meta(JSON in hand) -> %s, warm "
		 "(library only, no FUSE)", ptr);
	print_lat(what, o, n);
	if ((rc = tfs_close(keep)))
		die_tfs("tfs_close", rc);

	open_rounds(path, NULL, WARMUP / 10, ncold, o, c);
	snprintf(what, sizeof(what), "tensorfs: tfs_open(path) -> %s, cold (maps the handle each time)",
		 ptr);
	print_lat(what, o, ncold);
	print_lat("tensorfs: tfs_close, cold (unmaps the handle)", c, ncold);
	open_rounds(path, json, WARMUP / 10, ncold, o, c);
	snprintf(what, sizeof(what), "tensorfs: tfs_open_meta(JSON in hand) -> %s, cold", ptr);
	print_lat(what, o, ncold);
	syscall_rounds(path, n, (double *[4]){ o, x, y, c });
	free(o);
	free(x);
	free(y);
	free(c);
	return 0;
}

/* Makes path a new 4 MiB f32 tensor and, when json is not NULL, reads its metadata there
 * (4096 bytes, NUL-terminated); exits on failure. */
static void new_tensor(const char *path, char *json)
{
	ssize_t len = 0;
	int fd;

	fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0 || fsetxattr(fd, "user.tensor.dtype", "f32", 3, 0) ||
	    fsetxattr(fd, "user.tensor.shape", "[1048576]", 9, 0) ||
	    (json && (len = fgetxattr(fd, "user.tensor.meta", json, 4095)) < 0)) {
		fprintf(stderr, "lib_bench: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	if (json)
		json[len] = 0;
	close(fd);
}

/* The steps of a first open one by one, on n more new tensors: what tfs_open could
 * overlap and what it cannot. json: room for n documents. */
static void first_breakdown(const char *dir, int n, char (*json)[4096])
{
	static const char *const what[5] = {
		"first, breakdown: stat(path) (FUSE GETATTR: the attributes changed since the kernel had them)",
		"first, breakdown: getxattr(path, user.tensor.meta) (FUSE GETXATTR)",
		"first, breakdown: open(2) (FUSE OPEN)",
		"first, breakdown: tfs_open_meta (maps the handle for the first time)",
		"first, breakdown: tfs_close (unmaps it)",
	};
	double *us[5], t[6];
	char path[4096];
	struct stat st;
	tfs_tensor *x;
	ssize_t len;
	int i, k, fd, rc;

	for (k = 0; k < 5; k++)
		if (!(us[k] = malloc(sizeof(double) * (size_t)n)))
			return;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/second.%d", dir, i);
		new_tensor(path, NULL);
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/second.%d", dir, i);
		t[0] = bench_now();
		if (stat(path, &st))
			goto fail;
		t[1] = bench_now();
		if ((len = getxattr(path, "user.tensor.meta", json[i], sizeof(json[i]) - 1)) < 0)
			goto fail;
		json[i][len] = 0;
		t[2] = bench_now();
		if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
			goto fail;
		t[3] = bench_now();
		if ((rc = tfs_open_meta(json[i], (size_t)len, &x)))
			die_tfs("tfs_open_meta", rc);
		if (!tfs_tensor_data(x))
			die_tfs("tfs_tensor_data", -EIO);
		t[4] = bench_now();
		if ((rc = tfs_close(x)))
			die_tfs("tfs_close", rc);
		t[5] = bench_now();
		close(fd);
		for (k = 0; k < 5; k++)
			us[k][i] = (t[k + 1] - t[k]) * 1e6;
	}
	for (k = 0; k < 5; k++)
		print_lat(what[k], us[k], n);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/second.%d", dir, i);
		unlink(path);
	}
	for (k = 0; k < 5; k++)
		free(us[k]);
	return;
fail:
	fprintf(stderr, "lib_bench: %s: %s\n", path, strerror(errno));
	exit(1);
}

/* lib/open_ahead.c's count of opens its helper made, where the library has one. */
extern long tfs_ahead_count(void) __attribute__((weak));

/* A worker's first open of each of its tensors: no metadata remembered, no mapping held,
 * so tfs_open reads the metadata by path before it opens (lib/client_open.c). */
static int do_first(const char *dir, int n)
{
	double *o = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
	double *c = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
	char (*json)[4096] = malloc(sizeof(*json) * (size_t)(n > 0 ? n : 1));
	char path[4096];
	tfs_tensor *t;
	double t0, t1, t2;
	long ahead;
	int i, rc;

	if (!o || !c || !json || n < 1) {
		fprintf(stderr, "lib_bench: bad count or out of memory\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/first.%d", dir, i);
		new_tensor(path, json[i]);
	}
	/* The process's first mapping starts CUDA (~140 ms), which no later open pays. */
	snprintf(path, sizeof(path), "%s/first.%d", dir, n);
	new_tensor(path, NULL);
	if ((rc = tfs_open(path, O_RDWR, &t)) || !tfs_tensor_data(t) || (rc = tfs_close(t)))
		die_tfs(path, rc ? rc : -EIO);
	unlink(path);
	ahead = tfs_ahead_count ? tfs_ahead_count() : 0;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/first.%d", dir, i);
		t0 = bench_now();
		if ((rc = tfs_open(path, O_RDWR, &t)))
			die_tfs(path, rc);
		if (!tfs_tensor_data(t))
			die_tfs("tfs_tensor_data", -EIO);
		t1 = bench_now();
		if ((rc = tfs_close(t)))
			die_tfs("tfs_close", rc);
		t2 = bench_now();
		o[i] = (t1 - t0) * 1e6;
		c[i] = (t2 - t1) * 1e6;
	}
	for (i = 0, rc = 0; i < n; i++)
		if (o[i] > 1000)
			printf("%s%d: %.0f µs", rc++ ? ", " : "(the opens over 1 ms: ", i, o[i]);
	if (rc)
		printf(")\n");
	print_lat("tensorfs: tfs_open(path), the first in this process of each tensor", o, n);
	if (tfs_ahead_count)
		printf("(of those, %ld opened by the library's helper thread meanwhile)\n",
		       tfs_ahead_count() - ahead);
	print_lat("tensorfs: tfs_close after it (unmaps the handle)", c, n);
	for (i = 0; i < n; i++) {
		t0 = bench_now();
		if ((rc = tfs_open_meta(json[i], strlen(json[i]), &t)))
			die_tfs("tfs_open_meta", rc);
		if (!tfs_tensor_data(t))
			die_tfs("tfs_tensor_data", -EIO);
		o[i] = (bench_now() - t0) * 1e6;
		if ((rc = tfs_close(t)))
			die_tfs("tfs_close", rc);
	}
	print_lat("tensorfs: tfs_open_meta(JSON in hand) of the same tensors (mapped once "
		  "before, closed since)", o, n);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/first.%d", dir, i);
		unlink(path);
	}
	first_breakdown(dir, n, json);
	free(json);
	free(o);
	free(c);
	return 0;
}

/* ---- direct copy ---- */

enum { TO_TENSOR, FROM_TENSOR };

struct copy_ctx {
	tfs_tensor *t;
	uint64_t size;
	uint8_t *buf;        /* the caller's buffer: pinned or pageable */
	void *ceil_dst;      /* the ceiling's other end: cudaMalloc'd, or malloc'd (host) */
	int on_host;
};

/* One pass over the whole tensor in pieces of `piece` bytes; returns seconds. */
static double pass(struct copy_ctx *x, int dir, uint64_t piece, int ceiling)
{
	double t0 = bench_now();
	uint64_t off;
	int rc;

	for (off = 0; off < x->size; off += piece) {
		size_t len = (size_t)(x->size - off < piece ? x->size - off : piece);

		if (!ceiling) {
			rc = dir == TO_TENSOR ? tfs_write(x->t, off, x->buf + off, len)
					      : tfs_read(x->t, off, x->buf + off, len);
			if (rc)
				die_tfs(dir == TO_TENSOR ? "tfs_write" : "tfs_read", rc);
		} else if (x->on_host) {
			if (dir == TO_TENSOR)
				memcpy((uint8_t *)x->ceil_dst + off, x->buf + off, len);
			else
				memcpy(x->buf + off, (uint8_t *)x->ceil_dst + off, len);
		} else {
#ifdef WITH_CUDA
			check_cuda("cudaMemcpy", dir == TO_TENSOR
				   ? cudaMemcpy((uint8_t *)x->ceil_dst + off, x->buf + off, len,
						cudaMemcpyHostToDevice)
				   : cudaMemcpy(x->buf + off, (uint8_t *)x->ceil_dst + off, len,
						cudaMemcpyDeviceToHost));
#endif
		}
	}
	return bench_now() - t0;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Median GB/s of REPS passes each, tfs and ceiling alternating so that drift in the
 * machine's memory bandwidth hits both alike. */
static void copy_row(struct copy_ctx *x, const char *what, int dir, uint64_t piece)
{
	double g[2][REPS];
	char pieces[32];
	int r, c;

	pass(x, dir, piece, 0);      /* warm-up: first-touch of staging, TLBs */
	pass(x, dir, piece, 1);
	for (r = 0; r < REPS; r++)
		for (c = 0; c < 2; c++)
			g[c][r] = (double)x->size / pass(x, dir, piece, c) / 1e9;
	double tfs = median(g[0], REPS), ceil = median(g[1], REPS);

	if (piece >= x->size)
		snprintf(pieces, sizeof(pieces), "whole (%" PRIu64 " MiB)", x->size / MiB);
	else
		snprintf(pieces, sizeof(pieces), "%" PRIu64 " MiB", piece / MiB);
	printf("| %s | %s | %.2f | %.2f | %.0f%% |\n", what, pieces, tfs, ceil, 100 * tfs / ceil);
}

/* Fills buf with a pattern no earlier pass left there, writes it, reads it back into
 * a cleared buf and compares: the figures mean nothing if the bytes did not move. */
static void verify(struct copy_ctx *x, uint8_t *check)
{
	uint64_t i;
	int rc;

	for (i = 0; i + 8 <= x->size; i += 8) {
		uint64_t v = i * 0x9E3779B97F4A7C15ull;

		memcpy(x->buf + i, &v, 8);
	}
	if ((rc = tfs_write(x->t, 0, x->buf, (size_t)x->size)))
		die_tfs("tfs_write", rc);
	memset(check, 0, (size_t)x->size);
	if ((rc = tfs_read(x->t, 0, check, (size_t)x->size)))
		die_tfs("tfs_read", rc);
	if (memcmp(check, x->buf, (size_t)x->size)) {
		fprintf(stderr, "lib_bench: the bytes read back differ from those written\n");
		exit(1);
	}
}

static void copy_rows(struct copy_ctx *x, const char *kind)
{
	static const uint64_t pieces[] = { 1 * MiB, 64 * MiB, 0 };
	char what[128];
	size_t i;

	for (i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		uint64_t p = pieces[i] ? pieces[i] : x->size;

		if (pieces[i] && pieces[i] >= x->size)
			continue;
		snprintf(what, sizeof(what), "tfs_write (%s), %s", x->on_host ? "to shm" : "H2D", kind);
		copy_row(x, what, TO_TENSOR, p);
		snprintf(what, sizeof(what), "tfs_read (%s), %s", x->on_host ? "from shm" : "D2H", kind);
		copy_row(x, what, FROM_TENSOR, p);
	}
}

static int do_copy(const char *path)
{
	struct tfs_tensor_info info;
	struct copy_ctx x = { 0 };
	uint8_t *pageable;
	int rc;

	if ((rc = tfs_open(path, O_RDWR, &x.t)))
		die_tfs(path, rc);
	if ((rc = tfs_tensor_get_info(x.t, &info)))
		die_tfs("tfs_tensor_get_info", rc);
	if (info.bytes < MiB) {
		fprintf(stderr, "lib_bench: %s has %" PRIu64 " bytes: shape it to 1 MiB or more\n", path,
			info.bytes);
		return 1;
	}
	x.size = info.bytes;
	x.on_host = info.on_host;
	pageable = malloc((size_t)x.size);
	if (!pageable) {
		fprintf(stderr, "lib_bench: out of memory\n");
		return 1;
	}
	memset(pageable, 1, (size_t)x.size);        /* fault the pages in before any timing */
	if (x.on_host) {
		x.ceil_dst = malloc((size_t)x.size);
		if (!x.ceil_dst) {
			fprintf(stderr, "lib_bench: out of memory\n");
			return 1;
		}
		memset(x.ceil_dst, 0, (size_t)x.size);
	} else {
#ifdef WITH_CUDA
		void *pinned;

		check_cuda("cudaSetDevice", cudaSetDevice(info.device));
		check_cuda("cudaMalloc", cudaMalloc(&x.ceil_dst, (size_t)x.size));
		check_cuda("cudaHostAlloc", cudaHostAlloc(&pinned, (size_t)x.size, cudaHostAllocDefault));
		memset(pinned, 1, (size_t)x.size);
		x.buf = pinned;
		verify(&x, pageable);
		copy_rows(&x, "pinned caller buffer");
		x.buf = NULL;
		check_cuda("cudaFreeHost", cudaFreeHost(pinned));
#else
		fprintf(stderr, "lib_bench: a cuda tensor needs the build with -DWITH_CUDA "
			"(tests/bench/lib_bench.sh makes it)\n");
		return 1;
#endif
	}
	/* The pageable rows: what a caller that did not pin gets (a cudaMemcpy from pageable
	 * memory goes through the driver's own staging). */
	x.buf = pageable;
	if (x.on_host) {
		uint8_t *check = malloc((size_t)x.size);

		if (!check) {
			fprintf(stderr, "lib_bench: out of memory\n");
			return 1;
		}
		verify(&x, check);
		free(check);
	}
	copy_rows(&x, x.on_host ? "pageable caller buffer (ceiling: memcpy)"
			     : "pageable caller buffer");
#ifdef WITH_CUDA
	if (!x.on_host)
		check_cuda("cudaFree", cudaFree(x.ceil_dst));
	else
#endif
		free(x.ceil_dst);
	free(pageable);
	if ((rc = tfs_close(x.t)))
		die_tfs("tfs_close", rc);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 5 && !strcmp(argv[1], "open"))
		return do_open(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc >= 4 && !strcmp(argv[1], "first"))
		return do_first(argv[2], atoi(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "copy"))
		return do_copy(argv[2]);
	fprintf(stderr, "usage: see the top of tests/bench/lib_bench.c\n");
	return 2;
}
