/* The host tier beside a device backend (fs/mem/tiers_backend.c), which the cuda backend
 * runs on the GPU machine, here over the real host backend (its shared-memory objects,
 * made in this process: no keeper) and a device side of malloc'd memory standing in for
 * GPUs, as -o host_devices does for the daemon: allocations go to the side their device
 * names; a sleep and a wake keep the bytes and return the checksum of tier.h; the old
 * memory is alive while the commit runs and freed after; a wake of bytes changed asleep
 * is -EBADMSG with nothing changed; a move between devices runs the commit before the old
 * memory goes, as a sleep does; records say backend "host" for the host tier. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mem/backend.h"
#include "mem/host_mem.h"
#include "mem/tiers_backend.h"
#include "meta.h"
#include "tier.h"

#include "tap.h"

struct tfs_mem tfs_mem;

/* ---- the device side: two devices of malloc'd memory ---- */
struct dev_alloc {
	int device;
	uint64_t bytes;
	unsigned char *p;
};
static int dev_live[2];

static int dev_init(struct tfs_backend **out, int device, uint64_t max_bytes)
{
	(void)device;
	(void)max_bytes;
	*out = (struct tfs_backend *)&dev_live;
	return 0;
}
static void dev_fini(struct tfs_backend *be) { (void)be; }
static int dev_count(struct tfs_backend *be) { (void)be; return 2; }
static int dev_alloc(struct tfs_backend *be, int device, uint64_t bytes, uid_t uid, gid_t gid,
		     mode_t mode, uint64_t dir, struct tfs_alloc **out)
{
	struct dev_alloc *a;

	(void)be; (void)uid; (void)gid; (void)mode; (void)dir;
	if (device < 0 || device > 1)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	a->p = calloc(1, bytes);
	a->bytes = bytes;
	a->device = device;
	dev_live[device]++;
	*out = (struct tfs_alloc *)a;
	return 0;
}
static void dev_free(struct tfs_backend *be, struct tfs_alloc *x)
{
	struct dev_alloc *a = (struct dev_alloc *)x;

	(void)be;
	dev_live[a->device]--;
	free(a->p);
	free(a);
}
static int dev_resize(struct tfs_backend *be, struct tfs_alloc **x, uint64_t bytes)
{
	struct dev_alloc *a = (struct dev_alloc *)*x;
	unsigned char *p = realloc(a->p, bytes ? bytes : 1);

	(void)be;
	if (bytes > a->bytes)
		memset(p + a->bytes, 0, bytes - a->bytes);
	a->p = p;
	a->bytes = bytes;
	return 0;
}
static int dev_export(struct tfs_backend *be, struct tfs_alloc *x,
		      uint8_t handle[TFS_IPC_HANDLE_SIZE], uint64_t *offset)
{
	(void)be;
	memset(handle, 0, TFS_IPC_HANDLE_SIZE);
	memcpy(handle, &x, sizeof(x));
	*offset = 0;
	return 0;
}
static int dev_copy_in(struct tfs_backend *be, struct tfs_alloc *x, uint64_t off,
		       const void *src, size_t len)
{
	struct dev_alloc *a = (struct dev_alloc *)x;

	(void)be;
	if (off > a->bytes || len > a->bytes - off)
		return -EINVAL;
	memcpy(a->p + off, src, len);
	return 0;
}
static int dev_copy_out(struct tfs_backend *be, struct tfs_alloc *x, uint64_t off, void *dst,
			size_t len)
{
	struct dev_alloc *a = (struct dev_alloc *)x;

	(void)be;
	if (off > a->bytes || len > a->bytes - off)
		return -EINVAL;
	memcpy(dst, a->p + off, len);
	return 0;
}
static void dev_stats(struct tfs_backend *be, int device, struct tfs_backend_stats *st)
{
	(void)be;
	memset(st, 0, sizeof(*st));
	st->nallocs = (uint64_t)dev_live[device];
}
static int dev_adopt(struct tfs_backend *be, const struct tfs_meta *m, struct tfs_alloc **out)
{
	(void)be; (void)m; (void)out;
	return -ENOENT;
}
static int dev_adopt_end(struct tfs_backend *be) { (void)be; return 0; }

/* A move between the two devices, as the cuda backend's: new memory, the bytes, the
 * commit, then the old memory freed. */
static int dev_move_sum(struct tfs_backend *be, struct tfs_alloc *x, int device,
			uint64_t *sum, void (*commit)(void *arg), void *arg)
{
	struct dev_alloc *a = (struct dev_alloc *)x;
	unsigned char *old = a->p, *p;
	int from = a->device;

	(void)be;
	if (*sum || device < 0 || device > 1)
		return -EINVAL;
	if (device == from)
		return 0;
	if (!(p = malloc(a->bytes ? a->bytes : 1)))
		return -ENOMEM;
	memcpy(p, old, a->bytes);
	dev_live[device]++;
	a->p = p;
	a->device = device;
	if (commit)
		commit(arg);
	free(old);
	dev_live[from]--;
	return 0;
}
static int dev_move(struct tfs_backend *be, struct tfs_alloc *x, int device)
{
	uint64_t sum = 0;

	return dev_move_sum(be, x, device, &sum, NULL, NULL);
}

static const struct tfs_backend_ops dev_ops = {
	.name = "dev", .init = dev_init, .fini = dev_fini, .device_count = dev_count,
	.alloc = dev_alloc, .free = dev_free, .resize = dev_resize, .export_handle = dev_export,
	.copy_in = dev_copy_in, .copy_out = dev_copy_out, .stats = dev_stats,
	.adopt = dev_adopt, .adopt_end = dev_adopt_end, .move = dev_move,
	.move_sum = dev_move_sum,
};

/* ---- the checks ---- */
static const struct tfs_backend_ops *ops;
static struct tfs_backend *be;

struct seen {
	int calls, dev_live_then, host_live_then;
	uint8_t handle[TFS_IPC_HANDLE_SIZE];
	struct tfs_alloc *a;
};

static void on_commit(void *arg)
{
	struct seen *s = arg;
	struct tfs_backend_stats st;
	uint64_t off;

	s->calls++;
	s->dev_live_then = dev_live[0] + dev_live[1];
	ops->stats(be, TFS_DEVICE_CPU, &st);
	s->host_live_then = (int)st.nallocs;
	ops->export_handle(be, s->a, s->handle, &off);
}

static uint64_t sum_of(const unsigned char *b, size_t n)
{
	uint64_t s = TFS_SUM_EMPTY;

	for (size_t off = 0; off < n; off += TFS_SUM_PIECE)
		s = tfs_sum_add(s, tfs_sum_piece(b + off, n - off < TFS_SUM_PIECE ? n - off :
						 TFS_SUM_PIECE, off));
	return tfs_sum_final(s);
}

int main(void)
{
	size_t n = 3 * TFS_SUM_PIECE + 4097;
	unsigned char *pat = malloc(n), *got = malloc(n);
	struct tfs_backend_stats st;
	struct tfs_alloc *a;
	struct seen s = { 0 };
	uint64_t sum, mapped;
	const void *mem;
	int fd;
	off_t pos;

	for (size_t i = 0; i < n; i++)
		pat[i] = (unsigned char)((i * 2654435761u) >> 11);
	tfs_mem.cpu_served = 1;
	ops = tfs_tiers_wrap(&dev_ops);
	tfs_mem.ops = ops;
	ok(ops->init(&be, 0, 0) == 0, "init: the device side and the host backend");
	ok(strcmp(tfs_mem_backend_name(TFS_DEVICE_CPU), "host") == 0 &&
	   strcmp(tfs_mem_backend_name(1), "dev") == 0, "records: host for cpu, dev for 1");
	ok(ops->device_count(be) == 2, "the device side's devices");

	ok(ops->alloc(be, 0, n, getuid(), getgid(), 0600, 7, &a) == 0 && dev_live[0] == 1,
	   "alloc on device 0: the device side's");
	ok(ops->copy_in(be, a, 0, pat, n) == 0, "bytes in");

	sum = 0;
	s.a = a;
	ok(ops->move_sum(be, a, TFS_DEVICE_CPU, &sum, on_commit, &s) == 0, "sleep: move to cpu");
	ok(s.calls == 1, "the commit ran once");
	ok(s.dev_live_then == 1 && s.host_live_then == 1,
	   "during the commit both sides are alive (the old memory is freed after)");
	ok(memcmp(s.handle, TFS_HOST_MAGIC, 8) == 0, "the commit sees the new, host handle");
	ok(dev_live[0] == 0, "after it the device memory is freed");
	ok(sum == sum_of(pat, n), "the checksum is tier.h's of the bytes");
	memset(got, 0, n);
	ok(ops->copy_out(be, a, 0, got, n) == 0 && memcmp(got, pat, n) == 0,
	   "the bytes in the host tier");
	ok(ops->read_mem(be, a, 0, n, &mem) == 0 && memcmp(mem, pat, n) == 0,
	   "read_mem: the host mapping");
	ok(ops->read_fd(be, a, 0, 16, &fd, &pos) == -ENOTSUP, "read_fd: -ENOTSUP on host");
	ok(ops->wait_mark(be, TFS_DEVICE_CPU, s.handle) == 0, "wait_mark on cpu: nothing to wait");

	s.calls = 0;
	ok(ops->move_sum(be, a, 1, &sum, on_commit, &s) == 0 && s.calls == 1 &&
	   dev_live[1] == 1, "wake on device 1 with the sum");
	ops->stats(be, TFS_DEVICE_CPU, &st);
	ok(st.nallocs == 0, "the host memory is freed after the wake");
	ok(ops->copy_out(be, a, 0, got, n) == 0 && memcmp(got, pat, n) == 0,
	   "the bytes woke unchanged");

	/* Between devices: the caller's commit runs too, the old memory alive meanwhile. */
	s.calls = 0;
	sum = 0;
	ok(ops->move_sum(be, a, 0, &sum, on_commit, &s) == 0 && s.calls == 1,
	   "a move from device 1 to 0 runs the commit once");
	ok(s.dev_live_then == 2 && dev_live[0] == 1 && dev_live[1] == 0,
	   "during it both devices' memory is alive, after it the old is freed");
	ok(ops->copy_out(be, a, 0, got, n) == 0 && memcmp(got, pat, n) == 0,
	   "the bytes moved unchanged");
	ok(ops->move_sum(be, a, 1, &sum, NULL, NULL) == 0 && dev_live[1] == 1,
	   "and back to device 1");

	sum = 0;
	ok(ops->move_sum(be, a, TFS_DEVICE_CPU, &sum, NULL, NULL) == 0, "sleep again");
	((unsigned char *)tfs_host_mem(*(struct tfs_alloc **)a, &mapped))[TFS_SUM_PIECE + 3] ^= 1;
	s.calls = 0;
	ok(ops->move_sum(be, a, 0, &sum, on_commit, &s) == -EBADMSG,
	   "a byte changed asleep: the wake is -EBADMSG");
	ok(s.calls == 0 && dev_live[0] == 0 && dev_live[1] == 0,
	   "no commit, the new device memory freed");
	ops->stats(be, TFS_DEVICE_CPU, &st);
	ok(st.nallocs == 1 && ops->copy_out(be, a, TFS_SUM_PIECE + 3, got, 1) == 0 &&
	   got[0] == (pat[TFS_SUM_PIECE + 3] ^ 1), "the tensor stays asleep, as it is");
	sum = 0;
	ok(ops->move_sum(be, a, 0, &sum, NULL, NULL) == 0, "unchecked (sum 0), the wake goes");
	ok(ops->move_sum(be, a, 1, &sum, NULL, NULL) == 0 && dev_live[0] == 0 &&
	   dev_live[1] == 1, "device to device: the device side's move");
	ops->free(be, a);

	ok(ops->alloc(be, TFS_DEVICE_CPU, 100, getuid(), getgid(), 0600, 7, &a) == 0,
	   "alloc in the host tier");
	ok(ops->resize(be, &a, n) == 0 && ops->copy_in(be, a, 0, pat, n) == 0 &&
	   ops->copy_out(be, a, 0, got, n) == 0 && memcmp(got, pat, n) == 0,
	   "a host-tier tensor grows and keeps its bytes");
	ok(ops->move_sum(be, a, 5, &sum, NULL, NULL) == -EINVAL, "a device past the last: -EINVAL");
	ops->free(be, a);
	ops->stats(be, TFS_DEVICE_CPU, &st);
	ok(st.nallocs == 0 && st.reserved == 0 && dev_live[0] + dev_live[1] == 0,
	   "everything freed");
	ok(ops->adopt_end(be) == 0, "adopt_end: nothing left to free");
	ops->fini(be);
	free(pat);
	free(got);
	printf("%d passed, %d failed\n", checks - failures, failures);
	return failures ? 1 : 0;
}
