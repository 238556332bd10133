/* Drives the CUDA backend (fs/cuda/) directly on a real GPU, with a second process
 * (tests/gpu/consumer) that maps tensors through their IPC handles. Needs no FUSE and no
 * Redis. Build: tests/gpu/build_backend_test.sh; run: build/gpu/backend_cuda_test
 * [--consumer PATH] [--device N] [--quick].
 * Prints one `ok - ...` / `not ok - ...` line per check, `# ...` lines with figures, and
 * `N passed, N failed` at the end; exits non-zero when a check failed. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "mem/backend.h"
#include "mem/cuda/vmm_drv.h"  /* a holder's mapping, as another process makes it */
#include "log.h"
#include "meta.h"           /* TFS_VMM_MAGIC */
#include "tier.h"
#include "../testrand.h"
#include "pattern.h"

#define KiB ((uint64_t)1024)
#define MiB (KiB * 1024)
#define GiB (MiB * 1024)

extern char **environ;

static const struct tfs_backend_ops *B = &tfs_backend_cuda;
static int npass, nfail, quick, device, throughput_only;
static char consumer[PATH_MAX];

static int check(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int check(int cond, const char *fmt, ...)
{
	va_list ap;

	if (cond)
		npass++;
	else
		nfail++;
	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- patterns (tests/gpu/pattern.h) ---- */

static void fill_pattern(uint8_t *buf, uint64_t len, uint64_t seed)
{
	uint64_t w, i;

	for (w = 0; w < len / 8; w++) {
		uint64_t x = tfs_pattern_mix(seed, w);

		memcpy(buf + 8 * w, &x, 8);     /* little-endian: byte k is x >> 8k */
	}
	for (i = len / 8 * 8; i < len; i++)
		buf[i] = tfs_pattern_byte(seed, i);
}

/* Index of the first byte that differs from the pattern, or -1. */
static int64_t find_mismatch(const uint8_t *buf, uint64_t len, uint64_t seed)
{
	uint64_t w, i;

	for (w = 0; w < len / 8; w++) {
		uint64_t x = tfs_pattern_mix(seed, w);

		if (memcmp(buf + 8 * w, &x, 8))
			break;
	}
	for (i = w * 8; i < len; i++)
		if (buf[i] != tfs_pattern_byte(seed, i))
			return (int64_t)i;
	return -1;
}

static int is_zero(const uint8_t *buf, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (buf[i])
			return 0;
	return 1;
}

static void fill_random(uint8_t *buf, uint64_t len)
{
	uint64_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t x = rng();

		memcpy(buf + i, &x, 8);
	}
	for (; i < len; i++)
		buf[i] = (uint8_t)rng();
}

/* ---- helpers ---- */

static struct tfs_alloc *talloc(struct tfs_backend *be, uint64_t bytes, uid_t uid, gid_t gid,
				mode_t mode)
{
	struct tfs_alloc *a = NULL;
	int rc = B->alloc(be, device, bytes, uid, gid, mode, 0, &a);

	if (rc < 0) {
		printf("# alloc of %" PRIu64 " bytes: %s\n", bytes, strerror(-rc));
		return NULL;
	}
	return a;
}


static int handle_of(struct tfs_backend *be, struct tfs_alloc *a, uint8_t h[TFS_IPC_HANDLE_SIZE],
		     uint64_t *off)
{
	int rc = B->export_handle(be, a, h, off);

	if (rc < 0)
		printf("# export_handle: %s\n", strerror(-rc));
	return rc;
}

/* Run the consumer; its exit status, or -1. */
static int run_consumer(const char *mode, const uint8_t h[TFS_IPC_HANDLE_SIZE], uint64_t off,
			uint64_t len, uint64_t seed)
{
	char hex[2 * TFS_IPC_HANDLE_SIZE + 1], offs[32], lens[32], seeds[32], devs[16];
	char *argv[] = { consumer, (char *)mode, hex, offs, lens, seeds, devs, NULL };
	pid_t pid;
	int i, st;

	for (i = 0; i < TFS_IPC_HANDLE_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", h[i]);
	snprintf(offs, sizeof(offs), "%" PRIu64, off);
	snprintf(lens, sizeof(lens), "%" PRIu64, len);
	snprintf(seeds, sizeof(seeds), "%" PRIu64, seed);
	snprintf(devs, sizeof(devs), "%d", device);
	fflush(stdout);
	if (posix_spawn(&pid, consumer, NULL, NULL, argv, environ))
		return -1;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* copy_out of [off, off+len) and compare with the pattern (or zeros when seed is 0). */
static int holds(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, uint64_t len,
		 uint64_t seed)
{
	uint8_t *buf = malloc(len ? len : 1);
	int rc, good;

	if (!buf)
		return 0;
	rc = B->copy_out(be, a, off, buf, len);
	good = rc == 0 && (seed ? find_mismatch(buf, len, seed) < 0 : is_zero(buf, len));
	if (rc)
		printf("# copy_out: %s\n", strerror(-rc));
	free(buf);
	return good;
}

static int put_pattern(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, uint64_t len,
		       uint64_t seed)
{
	uint8_t *buf = malloc(len ? len : 1);
	int rc;

	if (!buf)
		return -ENOMEM;
	fill_pattern(buf, len, seed);
	rc = B->copy_in(be, a, off, buf, len);
	free(buf);
	return rc;
}

/* ---- tests ---- */

/* Freed memory goes back to the pool once zeroed, by a thread of the backend; stats waits
 * for it. For the tests that check that a freed place is reused. */
static void back_in_pool(struct tfs_backend *be)
{
	struct tfs_backend_stats st;

	B->stats(be, 0, &st);
}

static void test_zero(struct tfs_backend *be)
{
	struct tfs_alloc *a, *b, *c;
	uint8_t h1[TFS_IPC_HANDLE_SIZE];
	uint64_t off1 = 0, off2 = 0;

	a = talloc(be, 3 * MiB + 123, 1000, 1000, 0600);
	b = talloc(be, 100, 1000, 1000, 0600);
	check(a && b && holds(be, a, 0, 3 * MiB + 123, 0) && holds(be, b, 0, 100, 0),
	      "alloc: 3 MiB + 123 and 100 bytes read as zeros");
	/* Dirty a small tensor, free it, allocate the same size: its place is reused and must
	 * come back zeroed. */
	c = talloc(be, 5000, 1000, 1000, 0600);
	if (c && put_pattern(be, c, 0, 5000, 3) == 0)
		handle_of(be, c, h1, &off1);
	B->free(be, c);
	back_in_pool(be);
	c = talloc(be, 5000, 1000, 1000, 0600);
	if (c)
		handle_of(be, c, h1, &off2);
	check(c && off1 == off2 && holds(be, c, 0, 5000, 0),
	      "reused sub-allocation (same offset %" PRIu64 ") reads as zeros", off2);
	B->free(be, a);
	B->free(be, b);
	B->free(be, c);

	/* A shrink gives its tail back to the pool: a tensor placed there reads zeros. A new
	 * owner gets a block of its own, so the layout is known: the shrunk tensor at 0, the
	 * next one right behind its 1024 bytes. */
	a = talloc(be, 600 * KiB, 1001, 1001, 0600);
	if (a && put_pattern(be, a, 0, 600 * KiB, 4) == 0 && B->resize(be, &a, 1000) == 0) {
		b = talloc(be, 500 * KiB, 1001, 1001, 0600);
		if (b)
			handle_of(be, b, h1, &off2);
		check(b && off2 == 1024 && holds(be, b, 0, 500 * KiB, 0) && holds(be, a, 0, 1000, 4),
		      "the tail a shrink gave back (reused at offset %" PRIu64 ") reads as zeros",
		      off2);
		B->free(be, b);
	} else {
		check(0, "the tail a shrink gave back: setup failed");
	}
	B->free(be, a);

	/* A large tensor's block is kept for reuse when freed: the next one reads zeros. */
	a = talloc(be, 64 * MiB, 1002, 1002, 0600);
	if (a && put_pattern(be, a, 0, 64 * MiB, 5) == 0) {
		B->free(be, a);
		back_in_pool(be);
		a = talloc(be, 64 * MiB, 1002, 1002, 0600);
		check(a && holds(be, a, 0, 64 * MiB, 0), "a reused 64 MiB block reads as zeros");
	} else {
		check(0, "a reused 64 MiB block: setup failed");
	}
	B->free(be, a);
}

static void test_roundtrip_ipc(struct tfs_backend *be)
{
	const uint64_t N = 100 * MiB + 13;
	static const struct { uint64_t off, len; } cases[] = {
		{ 0, 1 }, { 1, 4095 }, { 12345, 9 * MiB + 17 }, { 7, 70 * MiB + 3 },
		{ 100 * MiB + 12, 1 }, { 100 * MiB + 13 - 300000, 300000 }, { 3 * MiB + 1, 256 * KiB + 1 },
		{ 5, 511 }, { 33 * MiB + 3, 8 * MiB }, { 64 * MiB - 1, 2 * MiB + 2 },
	};
	static const struct { uint64_t off, len; } outs[] = {
		{ 77, 5 * MiB + 3 }, { 100 * MiB + 12, 1 }, { 64 * MiB - 1, 17 * MiB + 2 },
		{ 1, 255 * KiB }, { 9, 1 * MiB + 1 },
	};
	uint8_t *mirror = calloc(1, N), *buf = malloc(N);
	uint8_t h[TFS_IPC_HANDLE_SIZE];
	struct tfs_alloc *a = talloc(be, N, 1000, 1000, 0600);
	uint64_t hoff = 0;
	size_t i;
	int rc = 0, st;

	if (!check(a && mirror && buf, "alloc of 100 MiB + 13 bytes"))
		goto out;
	rng_state = 5;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]) && rc == 0; i++) {
		fill_random(mirror + cases[i].off, cases[i].len);
		rc = B->copy_in(be, a, cases[i].off, mirror + cases[i].off, cases[i].len);
	}
	check(rc == 0, "copy_in of random bytes at %zu odd offsets/lengths (up to 70 MiB)", i);
	rc = B->copy_out(be, a, 0, buf, N);
	check(rc == 0 && !memcmp(buf, mirror, N), "copy_out of all 100 MiB + 13 matches");
	for (i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		memset(buf, 0xa5, outs[i].len);
		rc = B->copy_out(be, a, outs[i].off, buf, outs[i].len);
		if (rc || memcmp(buf, mirror + outs[i].off, outs[i].len))
			break;
	}
	check(i == sizeof(outs) / sizeof(outs[0]), "copy_out at odd offsets/lengths matches");
	check(B->copy_in(be, a, N, buf, 1) == -EINVAL && B->copy_in(be, a, N - 1, buf, 2) == -EINVAL &&
	      B->copy_out(be, a, N + 1, buf, 0) == -EINVAL && B->copy_out(be, a, N, buf, 0) == 0,
	      "copies outside the tensor are EINVAL");

	/* Another process maps the handle. */
	if (!check(handle_of(be, a, h, &hoff) == 0 && hoff == 0, "export_handle of a large tensor "
		   "(offset %" PRIu64 ")", hoff))
		goto out;
	put_pattern(be, a, 4097, 20 * MiB + 3, 11);
	check(run_consumer("check", h, hoff + 4097, 20 * MiB + 3, 11) == 0,
	      "consumer process reads the bytes copy_in wrote");
	check(run_consumer("check", h, hoff + 4097, 20 * MiB + 3, 99) == 1,
	      "consumer process notices wrong bytes (control)");
	check(run_consumer("write", h, hoff + 50 * MiB + 5, 3 * MiB + 1, 12) == 0 &&
	      holds(be, a, 50 * MiB + 5, 3 * MiB + 1, 12),
	      "copy_out reads what the consumer wrote with cudaMemcpy");
	st = run_consumer("kwrite", h, hoff + 60 * MiB + 7, 10 * MiB + 1, 13);
	if (st == 3)
		check(1, "# skip: consumer built without the kernel");
	else
		check(st == 0 && holds(be, a, 60 * MiB + 7, 10 * MiB + 1, 13),
		      "copy_out reads what the consumer's kernel wrote");
out:
	B->free(be, a);
	free(mirror);
	free(buf);
}

/* copy_in_fd: a file's bytes at odd offsets and lengths, across the staging ring's pieces,
 * land where copy_out finds them; a file that ends first and a range outside the tensor
 * are refused. */
static void test_copy_in_fd(struct tfs_backend *be)
{
	const uint64_t N = 40 * MiB + 5, F = 48 * MiB + 3;
	static const struct { uint64_t off, foff, len; } cases[] = {
		{ 0, 0, 1 }, { 3, 1, 4095 }, { 12345, 777, 9 * MiB + 17 }, { 11 * MiB, 5, 29 * MiB + 5 },
		{ 40 * MiB + 4, 48 * MiB + 2, 1 }, { 7, 2 * MiB - 1, 2 * MiB + 2 },
	};
	char path[] = "/tmp/tfs-copy-in-fd.XXXXXX";
	uint8_t *file = malloc(F), *mirror = calloc(1, N), *buf = malloc(N);
	struct tfs_alloc *a = talloc(be, N, 1000, 1000, 0600);
	int fd = mkstemp(path), rc = 0;
	size_t i;

	if (!check(a && file && mirror && buf && fd >= 0, "alloc of 40 MiB and a 48 MiB file"))
		goto out;
	unlink(path);
	rng_state = 9;
	fill_random(file, F);
	if (!check(pwrite(fd, file, F, 0) == (ssize_t)F, "the file written"))
		goto out;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]) && rc == 0; i++) {
		memcpy(mirror + cases[i].off, file + cases[i].foff, cases[i].len);
		rc = B->copy_in_fd(be, a, cases[i].off, fd, cases[i].foff, cases[i].len);
	}
	check(rc == 0, "copy_in_fd at %zu odd offsets/lengths (up to 29 MiB)", i);
	rc = B->copy_out(be, a, 0, buf, N);
	check(rc == 0 && !memcmp(buf, mirror, N), "copy_out of all 40 MiB + 5 matches the file's bytes");
	check(B->copy_in_fd(be, a, 0, fd, F - 10, 11) == -ENODATA, "a file that ends first: ENODATA");
	check(B->copy_in_fd(be, a, N - 1, fd, 0, 2) == -EINVAL, "a range outside the tensor: EINVAL");
	check(B->copy_in_fd(be, a, 0, -1, 0, 5) == -EBADF, "a bad fd: EBADF");
out:
	if (fd >= 0)
		close(fd);
	B->free(be, a);
	free(file);
	free(mirror);
	free(buf);
}

static void test_small(struct tfs_backend *be)
{
	static const uint64_t sizes[6] = { 1000, 4096, 777, 100000, 65537, 3 };
	struct tfs_alloc *a[6] = { 0 }, *x;
	uint8_t h[6][TFS_IPC_HANDLE_SIZE];
	uint64_t off[6] = { 0 }, xoff;
	int i, j, nonzero = 0, same = 1, distinct = 1, k = -1, good = 1;

	for (i = 0; i < 6; i++) {
		a[i] = talloc(be, sizes[i], 2000, 2000, 0600);
		if (!a[i] || handle_of(be, a[i], h[i], &off[i]) || put_pattern(be, a[i], 0, sizes[i],
									       100 + (uint64_t)i))
			goto out;
		nonzero += off[i] != 0;
		same &= !memcmp(h[i], h[0], TFS_IPC_HANDLE_SIZE);
		for (j = 0; j < i; j++)
			distinct &= off[i] != off[j];
		if (off[i] && k < 0 && sizes[i] > 500)
			k = i;
	}
	check(same && distinct && nonzero >= 5 && off[0] % 256 == 0 && off[5] % 256 == 0,
	      "6 small tensors of one owner share a handle at distinct 256-aligned offsets "
	      "(%d non-zero)", nonzero);
	if (k < 0)
		goto out;
	check(run_consumer("check", h[k], off[k], sizes[k], 100 + (uint64_t)k) == 0,
	      "consumer reads a sub-allocated tensor through handle + offset %" PRIu64, off[k]);
	j = k == 3 ? 4 : 3;
	check(run_consumer("write", h[j], off[j], sizes[j], 200) == 0 &&
	      holds(be, a[j], 0, sizes[j], 200),
	      "copy_out reads what the consumer wrote at handle + offset %" PRIu64, off[j]);
	for (i = 0; i < 6; i++)
		if (i != j)
			good &= holds(be, a[i], 0, sizes[i], 100 + (uint64_t)i);
	check(good, "the neighbours in the block are untouched");
	B->free(be, a[1]);
	a[1] = NULL;
	back_in_pool(be);
	x = talloc(be, 4096, 2000, 2000, 0600);
	check(x && handle_of(be, x, h[1], &xoff) == 0 && xoff == off[1] && holds(be, x, 0, 4096, 0),
	      "freed sub-allocation reused at the same offset, zeroed");
	a[1] = x;
out:
	for (i = 0; i < 6; i++)
		B->free(be, a[i]);
}

static void test_isolation(struct tfs_backend *be)
{
	struct tfs_alloc *a1, *a2, *a3, *a4, *a5, *a6, *l, *l2;
	uint8_t h1[64], h2[64], h3[64], h4[64], h5[64], h6[64], hl[64], hx[64];
	uint64_t o1, o2, o3, o4, o5, o6, ol, ox;

	a1 = talloc(be, 4096, 3000, 100, 0600);
	a2 = talloc(be, 4096, 3001, 100, 0600);
	a3 = talloc(be, 4096, 3000, 100, 0600);
	a4 = talloc(be, 4096, 3000, 100, 0644);
	a5 = talloc(be, 4096, 3000, 50, 0640);
	a6 = talloc(be, 4096, 3000, 51, 0640);
	if (!check(a1 && a2 && a3 && a4 && a5 && a6 && !handle_of(be, a1, h1, &o1) &&
		   !handle_of(be, a2, h2, &o2) && !handle_of(be, a3, h3, &o3) &&
		   !handle_of(be, a4, h4, &o4) && !handle_of(be, a5, h5, &o5) &&
		   !handle_of(be, a6, h6, &o6), "6 small tensors of various owners"))
		goto out;
	check(memcmp(h1, h2, 64) != 0, "two uids never share a block (distinct handles)");
	check(memcmp(h1, h3, 64) == 0, "same uid and mode share a block");
	check(memcmp(h1, h4, 64) != 0 && memcmp(h1, h5, 64) != 0 && memcmp(h5, h6, 64) != 0,
	      "private, world-readable and group-readable (per gid) tensors do not share");

	/* chown of a tensor that shares its block moves it out. */
	put_pattern(be, a3, 0, 4096, 7);
	check(B->set_owner(be, a3, 3001, 100, 0600, 0, 0) == 0 && !handle_of(be, a3, h3, &o3) &&
	      memcmp(h3, h1, 64) != 0 && holds(be, a3, 0, 4096, 7),
	      "set_owner of a shared-block tensor moves it away from the old owner's block");
	/* chown of a tensor alone in its block keeps the memory (and the handle). */
	l = talloc(be, 40 * MiB, 3000, 100, 0600);
	if (l && !handle_of(be, l, hl, &ol) && put_pattern(be, l, 0, 40 * MiB, 8) == 0) {
		check(B->set_owner(be, l, 3002, 100, 0600, 0, 0) == 0 && !handle_of(be, l, hx, &ox) &&
		      !memcmp(hl, hx, 64) && ox == ol && holds(be, l, 0, 40 * MiB, 8),
		      "set_owner of a lone tensor keeps memory and handle");
		l2 = talloc(be, 4096, 3002, 100, 0600);
		check(l2 && !handle_of(be, l2, hx, &ox) && memcmp(hl, hx, 64) != 0,
		      "the rekeyed block takes no other tensor");
		B->free(be, l2);
	}
	B->free(be, l);
out:
	B->free(be, a1);
	B->free(be, a2);
	B->free(be, a3);
	B->free(be, a4);
	B->free(be, a5);
	B->free(be, a6);
}

static void test_resize(struct tfs_backend *be)
{
	struct tfs_alloc *r, *s1, *s2;
	uint8_t *src = NULL;
	uint64_t i, total = 1 * GiB;
	double t0, t1;
	int rc = 0;

	r = talloc(be, 5 * MiB, 4000, 4000, 0600);
	if (!r || put_pattern(be, r, 0, 5 * MiB, 21))
		goto out;
	check(B->resize(be, &r, 13 * MiB) == 0 && holds(be, r, 0, 5 * MiB, 21) &&
	      holds(be, r, 5 * MiB, 8 * MiB, 0), "resize 5 -> 13 MiB keeps data, zero-fills growth");
	check(B->resize(be, &r, 1 * MiB + 5) == 0 && holds(be, r, 0, 1 * MiB + 5, 21),
	      "resize down to 1 MiB + 5 keeps the prefix");
	check(B->resize(be, &r, 3 * MiB) == 0 && holds(be, r, 0, 1 * MiB + 5, 21) &&
	      holds(be, r, 1 * MiB + 5, 2 * MiB - 5, 0),
	      "growing again zero-fills what the old bytes left behind");
	check(B->resize(be, &r, 0) == -EINVAL, "resize to 0 is EINVAL");

	s1 = talloc(be, 1000, 4001, 4001, 0600);
	s2 = talloc(be, 1000, 4001, 4001, 0600);
	if (s1 && s2 && !put_pattern(be, s1, 0, 1000, 22) && !put_pattern(be, s2, 0, 1000, 23))
		check(B->resize(be, &s1, 600 * KiB) == 0 && holds(be, s1, 0, 1000, 22) &&
		      holds(be, s1, 1000, 600 * KiB - 1000, 0) && holds(be, s2, 0, 1000, 23),
		      "a small tensor grows past its neighbour: data kept, neighbour intact");
	B->free(be, s1);
	B->free(be, s2);

	/* cp of 1 GiB in 1 MiB writes: the daemon resizes before each append. */
	src = malloc(total);
	if (!src)
		goto out;
	fill_pattern(src, total, 31);
	B->free(be, r);
	r = talloc(be, 1 * MiB, 4000, 4000, 0600);
	t0 = now();
	rc = r ? B->copy_in(be, r, 0, src, MiB) : -ENOMEM;
	for (i = MiB; rc == 0 && i < total; i += MiB) {
		rc = B->resize(be, &r, i + MiB);
		if (rc == 0)
			rc = B->copy_in(be, r, i, src + i, MiB);
	}
	t1 = now();
	check(rc == 0 && holds(be, r, 0, total, 31),
	      "cp emulation: 1 GiB by 1023 resize + copy_in of 1 MiB, data intact");
	printf("# cp emulation (resize + copy_in per 1 MiB, 1 thread): %.2f GB/s (%.3f s)\n",
	       (double)total / (t1 - t0) / 1e9, t1 - t0);
out:
	B->free(be, r);
	free(src);
}

/* --memory vmm packs tensors up to 1 MiB into shared VMM allocations, one key each (the
 * keys here are new: no block of an earlier test is reused): offsets in one handle, the
 * allocation's descriptor, and growth past 1 MiB into an allocation of its own. */
/* The host side's sum of n bytes of a tensor, from offset 0 (core/tier.h). */
static uint64_t host_sum(const uint8_t *b, size_t n)
{
	uint64_t s = TFS_SUM_EMPTY;

	for (size_t off = 0; off < n; off += TFS_SUM_PIECE)
		s = tfs_sum_add(s, tfs_sum_piece(b + off, n - off < TFS_SUM_PIECE ? n - off :
						  TFS_SUM_PIECE, off));
	return tfs_sum_final(s);
}

/* A sleep and a wake (copy_host_sum) between a tensor and registered host memory: the
 * bytes arrive, and the sum taken on the way (on the GPU where nvcc built its kernel)
 * equals the host's for every length, the ragged ones too. */
static void test_copy_host_sum(struct tfs_backend *be)
{
	static const size_t lens[] = { 1, 31, 33, 4096 + 5, 3 * MiB + 77, 40 * MiB + 8 };

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t n = lens[i];
		struct tfs_alloc *a = talloc(be, n, 1000, 1000, 0600);
		uint8_t *h = malloc(n), *src = malloc(n);
		uint64_t s1 = TFS_SUM_EMPTY, s2 = TFS_SUM_EMPTY;
		int rc = -ENOMEM;

		if (a && h && src) {
			fill_random(src, n);
			rc = B->copy_in(be, a, 0, src, n);
		}
		if (rc == 0)
			rc = B->host_register(be, h, n);
		if (rc == 0)
			rc = B->copy_host_sum(be, a, 0, h, n, 0, &s1);
		check(rc == 0 && !memcmp(h, src, n) && tfs_sum_final(s1) == host_sum(src, n),
		      "sleep of %zu bytes: bytes landed, the sum is the host's (rc %d)", n, rc);
		if (rc == 0) {
			memset(src, 0, n);
			rc = B->copy_in(be, a, 0, src, n);
		}
		if (rc == 0)
			rc = B->copy_host_sum(be, a, 0, h, n, 1, &s2);
		if (rc == 0)
			rc = B->copy_out(be, a, 0, src, n);
		check(rc == 0 && !memcmp(h, src, n) && s2 == s1,
		      "wake of %zu bytes: bytes landed, the same sum (rc %d)", n, rc);
		if (h)
			B->host_unregister(be, h);
		free(h);
		free(src);
		if (a)
			B->free(be, a);
	}
}

static void test_vmm_packing(struct tfs_backend *be)
{
	uint8_t h1[TFS_IPC_HANDLE_SIZE], h2[TFS_IPC_HANDLE_SIZE], h3[TFS_IPC_HANDLE_SIZE];
	struct tfs_alloc *p1 = talloc(be, 4096, 4100, 4100, 0600);
	struct tfs_alloc *p2 = talloc(be, 8192, 4100, 4100, 0600);
	struct tfs_alloc *p3 = talloc(be, 4096, 4101, 4101, 0600);
	uint64_t o1 = 1, o2 = 1, o3 = 1, size = 0;
	struct stat st;
	int fd = -1;

	if (!check(p1 && p2 && p3, "vmm packing: three small allocations"))
		goto out;
	check(handle_of(be, p1, h1, &o1) == 0 && handle_of(be, p2, h2, &o2) == 0 &&
	      handle_of(be, p3, h3, &o3) == 0 && !memcmp(h1, TFS_VMM_MAGIC, 8) &&
	      !memcmp(h1, h2, sizeof(h1)) && o1 != o2 && memcmp(h1, h3, sizeof(h1)) != 0,
	      "vmm packing: one key's small tensors share an allocation at offsets (%" PRIu64
	      ", %" PRIu64 "), another key's do not", o1, o2);
	for (int i = 7; i >= 0; i--)
		size = size << 8 | h1[16 + i];
	check(size >= 8192 + o2 && size <= 64 * MiB, "vmm packing: the handle names the "
	      "allocation (%" PRIu64 " bytes)", size);
	check(B->export_fd(be, p2, 0, &fd) == 0 && fd >= 0 && fstat(fd, &st) == 0,
	      "vmm packing: export_fd of a packed tensor gives its allocation's descriptor");
	if (fd >= 0)
		close(fd);
	check(put_pattern(be, p1, 0, 4096, 44) == 0 && put_pattern(be, p2, 0, 8192, 43) == 0 &&
	      holds(be, p1, 0, 4096, 44) && holds(be, p2, 0, 8192, 43),
	      "vmm packing: copies at the offsets");
	check(B->grows_in_place && B->grows_in_place(be, p2, 3 * MiB) == 0,
	      "vmm packing: a packed tensor does not grow in place past 1 MiB");
	check(B->resize(be, &p2, 3 * MiB) == 0 && holds(be, p2, 0, 8192, 43) &&
	      holds(be, p2, 8192, 3 * MiB - 8192, 0) && handle_of(be, p2, h2, &o2) == 0 &&
	      o2 == 0 && memcmp(h1, h2, sizeof(h1)) != 0 && holds(be, p1, 0, 4096, 44),
	      "vmm packing: growth past 1 MiB moves it to its own allocation, bytes kept");
	check(B->resize(be, &p1, 100000) == 0 && holds(be, p1, 0, 4096, 44) &&
	      holds(be, p1, 4096, 100000 - 4096, 0), "vmm packing: growth within 1 MiB keeps "
	      "the bytes");
out:
	if (p1)
		B->free(be, p1);
	if (p2)
		B->free(be, p2);
	if (p3)
		B->free(be, p3);
}

/* A holder of a VMM tensor, as another process holds it (libtensorfs's map_vmm): the
 * first chunk's descriptor (export_fd) imported and mapped at an address of its own. */
struct holder {
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	size_t size;
};

static int holder_map(struct tfs_backend *be, struct tfs_alloc *a, struct holder *ho)
{
	const struct tfs_vmm_drv *drv = tfs_vmm_drv();
	CUmemAccessDesc acc = { .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = device },
				.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	uint8_t h[TFS_IPC_HANDLE_SIZE];
	uint64_t off;
	int fd = -1, ok;

	memset(ho, 0, sizeof(*ho));
	if (!drv || handle_of(be, a, h, &off) || B->export_fd(be, a, 0, &fd))
		return -1;
	memcpy(&ho->size, h + 16, sizeof(uint64_t));    /* little-endian, as x86 */
	ok = drv->MemImportFromShareableHandle(&ho->h, (void *)(uintptr_t)fd,
					       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0;
	close(fd);
	if (!ok)
		return -1;
	if (drv->MemAddressReserve(&ho->va, ho->size, 0, 0, 0) ||
	    drv->MemMap(ho->va, ho->size, 0, ho->h, 0) ||
	    drv->MemSetAccess(ho->va, ho->size, &acc, 1)) {
		printf("# the holder's mapping failed\n");
		return -1;
	}
	return 0;
}

static void holder_unmap(struct holder *ho)
{
	const struct tfs_vmm_drv *drv = tfs_vmm_drv();

	if (!drv || !ho->va)
		return;
	drv->MemUnmap(ho->va, ho->size);
	drv->MemAddressFree(ho->va, ho->size);
	drv->MemRelease(ho->h);
}

/* len bytes at the holder's address off hold pattern seed (cudaMemcpy, as its kernels
 * would read them). */
static int holder_holds(const struct holder *ho, uint64_t off, uint64_t len, uint64_t seed)
{
	uint8_t *buf = malloc(len);
	int good;

	if (!buf)
		return 0;
	good = cudaMemcpy(buf, (void *)(uintptr_t)(ho->va + off), len, cudaMemcpyDeviceToHost) ==
	       cudaSuccess && find_mismatch(buf, len, seed) < 0;
	free(buf);
	return good;
}

/* Growth in place past the allocation (docs/vmm.md#growth): a chunk more at the end, the
 * holder's mapping of the first chunk the same memory with its bytes, the handle's id kept
 * and its size the new one, export_chunks gives every chunk; at TFS_VMM_CHUNKS_MAX chunks
 * growth moves (grows_in_place 0), the holder's memory still its own. */
static void test_vmm_grow(struct tfs_backend *be)
{
	uint8_t h[TFS_IPC_HANDLE_SIZE], h2[TFS_IPC_HANDLE_SIZE], w[4096];
	uint64_t off, sizes[32], total, hsize, cur;
	struct tfs_alloc *a;
	struct holder ho;
	int fds[32], n, i, steps = 0;

	a = talloc(be, 5 * MiB, 4000, 4000, 0600);
	if (!check(a != NULL, "vmm grow: alloc of 5 MiB") || !B->export_chunks ||
	    !B->grows_in_place)
		goto out;
	put_pattern(be, a, 0, 5 * MiB, 41);
	if (!check(handle_of(be, a, h, &off) == 0 && holder_map(be, a, &ho) == 0 &&
		   holder_holds(&ho, 0, 5 * MiB, 41), "vmm grow: a holder maps the first chunk"))
		goto out_free;
	check(B->grows_in_place(be, a, 40 * MiB) == 1,
	      "vmm grow: grows_in_place past the allocation (a chunk more): 1");
	check(B->resize(be, &a, 40 * MiB) == 0 && holds(be, a, 0, 5 * MiB, 41) &&
	      holds(be, a, 5 * MiB, 35 * MiB, 0),
	      "vmm grow: resize 5 -> 40 MiB keeps the bytes, zeros behind");
	hsize = 0;
	if (handle_of(be, a, h2, &off) == 0)
		memcpy(&hsize, h2 + 16, sizeof(hsize));
	check(off == 0 && !memcmp(h, h2, 16) && hsize >= 40 * MiB && memcmp(h, h2, sizeof(h)),
	      "vmm grow: the handle keeps the first chunk's id and says the new size");
	check(holder_holds(&ho, 0, 5 * MiB, 41),
	      "vmm grow: the holder's address keeps its first bytes");
	fill_pattern(w, sizeof(w), 42);
	check(cudaMemcpy((void *)(uintptr_t)(ho.va + MiB), w, sizeof(w), cudaMemcpyHostToDevice) ==
	      cudaSuccess && holds(be, a, MiB, sizeof(w), 42),
	      "vmm grow: what the holder writes the tensor reads (the same memory)");
	n = B->export_chunks(be, a, 0, fds, sizes, 32);
	total = 0;
	for (i = 0; i < n; i++) {
		total += sizes[i];
		close(fds[i]);
	}
	check(n == 2 && sizes[0] == ho.size && total == hsize,
	      "vmm grow: export_chunks gives both chunks, the first the holder's (%d)", n);
	/* A chunk per growth until the bound; then a move. */
	cur = 40 * MiB;
	while (B->grows_in_place(be, a, cur + 3 * MiB) && steps < 40) {
		if (B->resize(be, &a, cur + 3 * MiB))
			break;
		cur += 3 * MiB;
		steps++;
	}
	n = B->export_chunks(be, a, 0, fds, sizes, 32);
	for (i = 0; i < n; i++)
		close(fds[i]);
	check(n == 16 && holds(be, a, 0, MiB, 41) && holds(be, a, MiB, sizeof(w), 42) &&
	      holds(be, a, 5 * MiB, cur - 5 * MiB, 0),
	      "vmm grow: growth by 3 MiB %d times: 16 chunks, bytes kept, zeros behind (%d)",
	      steps, n);
	check(B->grows_in_place(be, a, cur + MiB * 3) == 0,
	      "vmm grow: at 16 chunks grows_in_place is 0");
	check(B->resize(be, &a, cur + 3 * MiB) == 0 && handle_of(be, a, h2, &off) == 0 &&
	      memcmp(h, h2, 16) != 0 && holds(be, a, 0, MiB, 41) &&
	      B->export_chunks(be, a, 0, fds, sizes, 32) == 1 && close(fds[0]) == 0,
	      "vmm grow: past it the tensor moves to one allocation, bytes kept");
	check(holder_holds(&ho, 0, MiB, 41),
	      "vmm grow: the holder's memory outlives the move (its handle holds it)");
	check(B->resize(be, &a, 2 * MiB) == 0 && B->resize(be, &a, 60 * MiB) == 0 &&
	      holds(be, a, 0, MiB, 41) && holds(be, a, 2 * MiB, 58 * MiB, 0),
	      "vmm grow: shrink then growth past the new allocation zero-fills");
	holder_unmap(&ho);
out_free:
	B->free(be, a);
out:
	return;
}

/* --memory vmm (docs/vmm.md): a tensor its own VMM allocation, exported as a descriptor;
 * copies, resize in place within the allocation and into a new one beyond it. */
static void test_vmm(struct tfs_backend *be)
{
	uint8_t h[TFS_IPC_HANDLE_SIZE], h2[TFS_IPC_HANDLE_SIZE];
	struct tfs_alloc *a;
	struct stat st;
	uint64_t off = 1;
	int fd = -1;

	tfs_cuda_set_vmm(1);
	a = talloc(be, 5 * MiB, 4000, 4000, 0600);
	if (!check(a != NULL, "vmm: alloc of 5 MiB"))
		goto out;
	check(put_pattern(be, a, 0, 5 * MiB, 41) == 0 && holds(be, a, 0, 5 * MiB, 41),
	      "vmm: copy_in / copy_out round trip");
	check(handle_of(be, a, h, &off) == 0 && off == 0 && !memcmp(h, TFS_VMM_MAGIC, 8),
	      "vmm: the handle is TFS_VMM_MAGIC at offset 0");
	check(B->export_fd && B->export_fd(be, a, 0, &fd) == 0 && fd >= 0 && fstat(fd, &st) == 0,
	      "vmm: export_fd gives a descriptor");
	if (fd >= 0)
		close(fd);
	check(B->resize(be, &a, 5 * MiB + 100) == 0 && holds(be, a, 0, 5 * MiB, 41) &&
	      holds(be, a, 5 * MiB, 100, 0) && handle_of(be, a, h2, &off) == 0 &&
	      !memcmp(h, h2, sizeof(h)), "vmm: growth within the allocation is in place");
	check(B->resize(be, &a, 40 * MiB) == 0 && holds(be, a, 0, 5 * MiB, 41) &&
	      holds(be, a, 5 * MiB, 35 * MiB, 0), "vmm: growth past it keeps the bytes, zero-fills");
	check(B->resize(be, &a, 1 * MiB) == 0 && B->resize(be, &a, 2 * MiB) == 0 &&
	      holds(be, a, 0, 1 * MiB, 41) && holds(be, a, 1 * MiB, 1 * MiB, 0),
	      "vmm: shrink then grow zero-fills");
	B->free(be, a);
	test_vmm_grow(be);
	test_vmm_packing(be);
out:
	tfs_cuda_set_vmm(0);
}

static void test_enospc(void)
{
	struct tfs_backend *be2 = NULL;
	struct tfs_backend_stats s0, s1;
	struct tfs_alloc *v[16] = { 0 }, *x = NULL;
	int n = 0, rc = 0, rc2;

	if (!check(B->init(&be2, device, 256 * MiB) == 0, "second backend with a 256 MiB cap"))
		return;
	while (n < 16 && (rc = B->alloc(be2, device, 32 * MiB, 5000, 5000, 0600, 0, &v[n])) == 0)
		n++;
	check(n == 8 && rc == -ENOSPC, "8 x 32 MiB fill the cap, the 9th is ENOSPC (%d, %d)", n, rc);
	if (n < 1)
		goto out;
	put_pattern(be2, v[0], 0, 32 * MiB, 51);
	B->stats(be2, 0, &s0);
	rc = B->alloc(be2, device, 4096, 5001, 5001, 0600, 0, &x);
	rc2 = B->resize(be2, &v[0], 64 * MiB);
	B->stats(be2, 0, &s1);
	check(rc == -ENOSPC && rc2 == -ENOSPC && !memcmp(&s0, &s1, sizeof(s0)) &&
	      holds(be2, v[0], 0, 32 * MiB, 51),
	      "alloc and resize past the cap: ENOSPC, stats and data unchanged");
	check(s0.total == 256 * MiB && s0.reserved <= 256 * MiB && s0.used == (uint64_t)n * 32 * MiB &&
	      s0.nallocs == (uint64_t)n, "stats: used %" PRIu64 " MiB, reserved %" PRIu64
	      " MiB, total %" PRIu64 " MiB", s0.used / MiB, s0.reserved / MiB, s0.total / MiB);
	B->free(be2, v[--n]);
	x = NULL;
	rc = B->alloc(be2, device, 4096, 5001, 5001, 0600, 0, &x);
	check(rc == 0 && holds(be2, x, 0, 4096, 0),
	      "after a free, another owner allocates (the cached block is released for it)");
	B->free(be2, x);
	x = NULL;
	rc = B->alloc(be2, device, 32 * MiB, 5000, 5000, 0600, 0, &x);
	check(rc == -ENOSPC || rc == 0, "allocation after trimming behaves (%d)", rc);
	B->free(be2, x);
out:
	while (n > 0)
		B->free(be2, v[--n]);
	B->fini(be2);
}

struct memcpy_job {
	uint8_t *dst;
	const uint8_t *src;
	uint64_t len;
};

/* What a staging copy costs on the CPU: 1 MiB memcpys from a big pageable buffer into a
 * small, cache-warm ring. */
static void *memcpy_thread(void *arg)
{
	struct memcpy_job *j = arg;
	uint64_t o;

	for (o = 0; o < j->len; o += MiB)
		memcpy(j->dst + o % (8 * MiB), j->src + o, MiB);
	return NULL;
}

static double memcpy_rate(uint8_t *ring, const uint8_t *src, uint64_t total, int nthreads)
{
	pthread_t th[16];
	struct memcpy_job jobs[16];
	double t0 = now();
	int i;

	for (i = 0; i < nthreads; i++) {
		jobs[i] = (struct memcpy_job){ ring + (uint64_t)i * 8 * MiB,
					       src + total / (uint64_t)nthreads * (uint64_t)i,
					       total / (uint64_t)nthreads };
		pthread_create(&th[i], NULL, memcpy_thread, &jobs[i]);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	return (double)total / (now() - t0) / 1e9;
}

struct copy_job {
	struct tfs_backend *be;
	struct tfs_alloc *a;
	uint8_t *host;
	uint64_t off, len;
	int out;
	int rc;
};

static void *copy_thread(void *arg)
{
	struct copy_job *j = arg;
	uint64_t o;

	for (o = j->off; o < j->off + j->len && j->rc == 0; o += MiB)
		j->rc = j->out ? B->copy_out(j->be, j->a, o, j->host + o, MiB)
			       : B->copy_in(j->be, j->a, o, j->host + o, MiB);
	return NULL;
}

/* Wall time of copying [0, total) in 1 MiB calls with nthreads threads. */
static double timed_copy(struct tfs_backend *be, struct tfs_alloc *a, uint8_t *host,
			 uint64_t total, int nthreads, int out, int *rc)
{
	pthread_t th[16];
	struct copy_job jobs[16];
	double t0, t1;
	int i;

	t0 = now();
	for (i = 0; i < nthreads; i++) {
		jobs[i] = (struct copy_job){ be, a, host, total / (uint64_t)nthreads * (uint64_t)i,
					     total / (uint64_t)nthreads, out, 0 };
		pthread_create(&th[i], NULL, copy_thread, &jobs[i]);
	}
	*rc = 0;
	for (i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		if (jobs[i].rc)
			*rc = jobs[i].rc;
	}
	t1 = now();
	return t1 - t0;
}

static void test_throughput(struct tfs_backend *be)
{
	const uint64_t total = quick ? 256 * MiB : 1 * GiB;
	struct tfs_alloc *a = talloc(be, total, 6000, 6000, 0600);
	uint8_t *src = malloc(total), *dst = malloc(total), *pinned = NULL, *dev = NULL;
	double t, gin1, gout1, gin8, gout8;
	uint64_t o;
	int rc, rc2;

	if (!check(a && src && dst, "throughput: tensor of %" PRIu64 " MiB", total / MiB))
		goto out;
	fill_pattern(src, total, 41);
	memset(dst, 0, total);  /* fault the pages in before timing */

	t = timed_copy(be, a, src, total, 1, 0, &rc);
	gin1 = (double)total / t / 1e9;
	t = timed_copy(be, a, dst, total, 1, 1, &rc2);
	gout1 = (double)total / t / 1e9;
	check(rc == 0 && rc2 == 0 && !memcmp(src, dst, total),
	      "1 thread, 1 MiB calls: copy_in %.2f GB/s, copy_out %.2f GB/s", gin1, gout1);
	memset(dst, 0, total);
	fill_pattern(src, total, 42);
	t = timed_copy(be, a, src, total, 8, 0, &rc);
	gin8 = (double)total / t / 1e9;
	t = timed_copy(be, a, dst, total, 8, 1, &rc2);
	gout8 = (double)total / t / 1e9;
	check(rc == 0 && rc2 == 0 && !memcmp(src, dst, total),
	      "8 threads, 1 MiB calls: copy_in %.2f GB/s, copy_out %.2f GB/s", gin8, gout8);
	/* One big call: the staging ring's overlap alone. */
	t = now();
	rc = B->copy_in(be, a, 0, src, total);
	gin1 = (double)total / (now() - t) / 1e9;
	t = now();
	rc2 = B->copy_out(be, a, 0, dst, total);
	gout1 = (double)total / (now() - t) / 1e9;
	check(rc == 0 && rc2 == 0 && !memcmp(src, dst, total),
	      "1 call of %" PRIu64 " MiB: copy_in %.2f GB/s, copy_out %.2f GB/s", total / MiB,
	      gin1, gout1);

	/* Baselines in the same run: plain cudaMemcpy from pinned and from pageable memory. */
	if (cudaHostAlloc((void **)&pinned, total, cudaHostAllocDefault) != cudaSuccess ||
	    cudaMalloc((void **)&dev, total) != cudaSuccess) {
		check(0, "baseline buffers");
		goto out;
	}
	memcpy(pinned, src, total);
	t = now();
	for (o = 0; o < total; o += MiB)
		cudaMemcpy(dev + o, pinned + o, MiB, cudaMemcpyHostToDevice);
	gin1 = (double)total / (now() - t) / 1e9;
	t = now();
	for (o = 0; o < total; o += MiB)
		cudaMemcpy(pinned + o, dev + o, MiB, cudaMemcpyDeviceToHost);
	gout1 = (double)total / (now() - t) / 1e9;
	printf("# baseline pinned cudaMemcpy, 1 MiB calls: H2D %.2f GB/s, D2H %.2f GB/s\n", gin1,
	       gout1);
	t = now();
	cudaMemcpy(dev, pinned, total, cudaMemcpyHostToDevice);
	gin1 = (double)total / (now() - t) / 1e9;
	t = now();
	cudaMemcpy(pinned, dev, total, cudaMemcpyDeviceToHost);
	gout1 = (double)total / (now() - t) / 1e9;
	printf("# baseline pinned cudaMemcpy, 1 call: H2D %.2f GB/s, D2H %.2f GB/s\n", gin1, gout1);
	t = now();
	for (o = 0; o < total; o += MiB)
		cudaMemcpy(dev + o, src + o, MiB, cudaMemcpyHostToDevice);
	gin1 = (double)total / (now() - t) / 1e9;
	t = now();
	for (o = 0; o < total; o += MiB)
		cudaMemcpy(dst + o, dev + o, MiB, cudaMemcpyDeviceToHost);
	gout1 = (double)total / (now() - t) / 1e9;
	printf("# baseline pageable cudaMemcpy, 1 MiB calls: H2D %.2f GB/s, D2H %.2f GB/s\n", gin1,
	       gout1);
	printf("# baseline host memcpy pageable -> pinned ring, 1 MiB calls: 1 thread %.2f GB/s, "
	       "8 threads %.2f GB/s\n", memcpy_rate(pinned, src, total, 1),
	       memcpy_rate(pinned, src, total, 8));
	check(cudaGetLastError() == cudaSuccess, "baseline copies ran");
out:
	if (pinned)
		cudaFreeHost(pinned);
	if (dev)
		cudaFree(dev);
	B->free(be, a);
	free(src);
	free(dst);
}

/* 10,000 tensors of log-uniform sizes 4 KiB..64 MiB, seed 1, as in tests/unit/test_pool.c. */
static void test_alloc_rate(void)
{
	enum { NMAX = 10000 };
	static uint64_t sizes[NMAX];
	static struct tfs_alloc *v[NMAX];
	struct tfs_backend *be3 = NULL;
	struct tfs_backend_stats st, st2;
	size_t freeb = 0, totalb = 0, free_after = 0;
	uint64_t sum = 0;
	double t0, t1, t2, t3;
	int n = quick ? 1000 : NMAX, i, fails = 0;

	if (!check(B->init(&be3, device, 0) == 0, "third backend, no cap"))
		return;
	rng_state = 1;
	for (i = 0; i < n; i++) {
		sizes[i] = log_uniform(4 * KiB, 64 * MiB);
		sum += sizes[i];
	}
	cudaMemGetInfo(&freeb, &totalb);
	while (n > 100 && (double)sum * 1.06 + (double)GiB > (double)freeb) {
		sum -= sizes[--n];      /* a smaller device: fewer tensors */
	}
	printf("# alloc bench: %d tensors, %.2f GiB requested, %.2f GiB free on the device\n", n,
	       (double)sum / (double)GiB, (double)freeb / (double)GiB);
	t0 = now();
	for (i = 0; i < n; i++)
		if (B->alloc(be3, device, sizes[i], 1000, 1000, 0644, 0, &v[i]) < 0) {
			v[i] = NULL;
			fails++;
		}
	t1 = now();
	B->stats(be3, 0, &st);
	cudaMemGetInfo(&free_after, &totalb);
	check(fails == 0 && st.used == sum && st.nallocs == (uint64_t)n,
	      "%d allocations (zeroed memory): %.0f allocs/s, %.2f s", n, n / (t1 - t0), t1 - t0);
	check((double)st.reserved <= 1.05 * (double)st.used,
	      "reserved/requested %.4f (%.2f GiB / %.2f GiB); device memory taken %.2f GiB",
	      (double)st.reserved / (double)st.used, (double)st.reserved / (double)GiB,
	      (double)st.used / (double)GiB, (double)(freeb - free_after) / (double)GiB);
	t2 = now();
	for (i = 0; i < n; i++)
		B->free(be3, v[i]);
	t3 = now();
	B->stats(be3, 0, &st2);
	check(st2.used == 0 && st2.nallocs == 0, "%d frees: %.0f frees/s; %.2f GiB stay cached", n,
	      n / (t3 - t2), (double)st2.reserved / (double)GiB);
	/* Again: now partly from the cache. */
	t0 = now();
	for (i = 0; i < n; i++)
		if (B->alloc(be3, device, sizes[i], 1000, 1000, 0644, 0, &v[i]) < 0)
			v[i] = NULL;
	t1 = now();
	for (i = 0; i < n; i++)
		B->free(be3, v[i]);
	t2 = now();
	printf("# second round: %.0f allocs/s, %.0f frees/s\n", n / (t1 - t0), n / (t2 - t1));
	/* Small tensors only: the pool's path without cudaMalloc. */
	t0 = now();
	for (i = 0; i < NMAX; i++)
		if (B->alloc(be3, device, 4 * KiB, 1000, 1000, 0644, 0, &v[i]) < 0)
			v[i] = NULL;
	t1 = now();
	for (i = 0; i < NMAX; i++)
		B->free(be3, v[i]);
	t2 = now();
	check(1, "10,000 x 4 KiB: %.0f allocs/s, %.0f frees/s (each zeroed, not waited for)",
	      NMAX / (t1 - t0), NMAX / (t2 - t1));
	B->fini(be3);
}

int main(int argc, char **argv)
{
	struct tfs_backend *be = NULL;
	struct tfs_backend_stats st;
	char *slash;
	int i, n;

	snprintf(consumer, sizeof(consumer), "%s", argv[0]);
	slash = strrchr(consumer, '/');
	snprintf(slash ? slash + 1 : consumer, sizeof(consumer) - (size_t)(slash ? slash + 1 - consumer : 0),
		 "consumer");
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--consumer") && i + 1 < argc)
			snprintf(consumer, sizeof(consumer), "%s", argv[++i]);
		else if (!strcmp(argv[i], "--device") && i + 1 < argc)
			device = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--throughput-only"))
			throughput_only = 1;
	}
	if (!check(access(consumer, X_OK) == 0, "consumer program at %s", consumer))
		goto done;
	if (!check(B->init(&be, device, 0) == 0, "init on device %d", device))
		goto done;
	n = B->device_count(be);
	check(!strcmp(B->name, "cuda") && n >= 1, "name cuda, %d device(s)", n);
	if (throughput_only) {
		test_throughput(be);
		B->fini(be);
		goto done;
	}

	test_zero(be);
	test_roundtrip_ipc(be);
	test_copy_in_fd(be);
	test_small(be);
	test_isolation(be);
	test_resize(be);
	test_copy_host_sum(be);
	test_vmm(be);
	test_enospc();
	test_throughput(be);
	B->stats(be, 0, &st);
	check(st.used == 0 && st.nallocs == 0 && st.reserved <= 4 * GiB,
	      "everything freed: used 0, %.2f GiB cached, total %.2f GiB",
	      (double)st.reserved / (double)GiB, (double)st.total / (double)GiB);
	B->fini(be);
	test_alloc_rate();
done:
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
