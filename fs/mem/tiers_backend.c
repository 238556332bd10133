/* The host tier beside a device backend (docs/tiers.md): one backend made of two, the
 * mount's own (cuda) for the GPU ordinals and the host backend for TFS_DEVICE_CPU, so that
 * every caller of backend.h keeps calling one table. Host-tier tensors are the host
 * backend's shared-memory objects, which every process maps by name (their records say
 * backend "host": tfs_mem_backend_name), registered with the device driver for their life
 * (host_register), so that a sleep or a wake is one DMA each way. A move between the tiers
 * is move_sum's: new memory on the other side, the bytes copied and summed as they go
 * (copy_host_sum), the commit, the old memory freed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mem/backend.h"
#include "mem/host_mem.h"
#include "mem/tiers_backend.h"
#include "log.h"
#include "meta.h"
#include "tier.h"

static const struct tfs_backend_ops *main_ops;   /* set by tfs_tiers_wrap, before init */
#define H (&tfs_backend_host)

struct tfs_backend {
	struct tfs_backend *main, *host;
};

/* One allocation of either side, and what a move to the other side needs of it. */
struct tfs_alloc {
	struct tfs_alloc *in;       /* the side's own allocation */
	int host;                   /* in is the host backend's */
	int device;                 /* where it is: TFS_DEVICE_CPU or a GPU ordinal */
	void *pinned;               /* host: the registered mapping, NULL when not */
	uint64_t bytes;
	uid_t uid;
	gid_t gid;
	mode_t mode;
	uint64_t dir;
};

static struct tfs_backend_ops tiers_ops;

const struct tfs_backend_ops *tfs_tiers_wrap(const struct tfs_backend_ops *main)
{
	main_ops = main;
	tiers_ops = tfs_backend_tiers;
	tiers_ops.name = main->name;
	return &tiers_ops;
}

const char *tfs_mem_backend_name(int device)
{
	return device == TFS_DEVICE_CPU ? "host" : tfs_mem.ops->name;
}

/* Registers a host allocation's mapping with the device driver, at its first move: then
 * for as long as the mapping stays (a resize lets go of it: a cp grows a tensor a piece at
 * a time). A failure leaves copies staged, slower, and is logged once. */
static void pin(struct tfs_backend *be, struct tfs_alloc *w)
{
	static int said;
	uint64_t mapped;
	void *p;

	if (!w->host || w->pinned || !main_ops->host_register || tfs_host_mem_pinned(w->in))
		return;
	p = tfs_host_mem(w->in, &mapped);
	if (main_ops->host_register(be->main, p, mapped) == 0)
		w->pinned = p;
	else if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		tfs_log(LOG_WARNING, "tiers: host memory could not be registered with the "
			"driver: host-tier copies are staged");
}

static void unpin(struct tfs_backend *be, struct tfs_alloc *w)
{
	if (w->pinned && main_ops->host_unregister)
		main_ops->host_unregister(be->main, w->pinned);
	w->pinned = NULL;
}

/* The pin hook of the host backend's preallocated segments (host_mem.h). */
static int hook_reg(void *ctx, void *p, size_t len)
{
	return main_ops->host_register(ctx, p, len);
}

static void hook_unreg(void *ctx, void *p)
{
	main_ops->host_unregister(ctx, p);
}

static int tiers_init(struct tfs_backend **out, int device, uint64_t max_bytes)
{
	struct tfs_backend *be = calloc(1, sizeof(*be));
	int rc;

	if (!be)
		return -ENOMEM;
	if ((rc = main_ops->init(&be->main, device, max_bytes)))
		goto fail;
	/* Before the host side starts: its pool's segments are registered as they are made,
	 * once each (docs/tiers.md#preallocation). */
	if (main_ops->host_register && main_ops->host_unregister)
		tfs_host_pin_hook(hook_reg, hook_unreg, be->main);
	if ((rc = H->init(&be->host, 0, max_bytes))) {
		main_ops->fini(be->main);
		goto fail;
	}
	*out = be;
	return 0;
fail:
	free(be);
	return rc;
}

static void tiers_fini(struct tfs_backend *be)
{
	main_ops->fini(be->main);
	H->fini(be->host);
	free(be);
}

static void tiers_set_caps(struct tfs_backend *be, const struct tfs_tier_sizes *caps,
			   const struct tfs_tier_sizes *prealloc)
{
	if (main_ops->set_caps)
		main_ops->set_caps(be->main, caps, prealloc);
}

static int tiers_device_count(struct tfs_backend *be)
{
	return main_ops->device_count(be->main);
}

static struct tfs_alloc *wrap(struct tfs_backend *be, struct tfs_alloc *in, int device,
			      uint64_t bytes, uid_t uid, gid_t gid, mode_t mode, uint64_t dir)
{
	struct tfs_alloc *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	(void)be;
	*w = (struct tfs_alloc){ .in = in, .host = device == TFS_DEVICE_CPU, .device = device,
				 .bytes = bytes, .uid = uid, .gid = gid, .mode = mode, .dir = dir };
	return w;
}

static int tiers_alloc(struct tfs_backend *be, int device, uint64_t bytes, uid_t uid,
		       gid_t gid, mode_t mode, uint64_t dir, struct tfs_alloc **out)
{
	int host = device == TFS_DEVICE_CPU;
	struct tfs_alloc *in, *w;
	int rc;

	rc = host ? H->alloc(be->host, device, bytes, uid, gid, mode, dir, &in) :
		    main_ops->alloc(be->main, device, bytes, uid, gid, mode, dir, &in);
	if (rc)
		return rc;
	if (!(w = wrap(be, in, device, bytes, uid, gid, mode, dir))) {
		(host ? H : main_ops)->free(host ? be->host : be->main, in);
		return -ENOMEM;
	}
	*out = w;
	return 0;
}

#define SIDE(w) ((w)->host ? H : main_ops)
#define BE(be, w) ((w)->host ? (be)->host : (be)->main)

static void tiers_free(struct tfs_backend *be, struct tfs_alloc *w)
{
	if (!w)
		return;
	unpin(be, w);
	SIDE(w)->free(BE(be, w), w->in);
	free(w);
}

static int tiers_resize(struct tfs_backend *be, struct tfs_alloc **ap, uint64_t bytes)
{
	struct tfs_alloc *w = *ap;
	int rc;

	unpin(be, w);           /* the host side may move its mapping */
	rc = SIDE(w)->resize(BE(be, w), &w->in, bytes);
	if (rc == 0)
		w->bytes = bytes;
	return rc;
}

static int tiers_export(struct tfs_backend *be, struct tfs_alloc *w,
			uint8_t handle[TFS_IPC_HANDLE_SIZE], uint64_t *offset)
{
	return SIDE(w)->export_handle(BE(be, w), w->in, handle, offset);
}

static int tiers_set_owner(struct tfs_backend *be, struct tfs_alloc *w, uid_t uid, gid_t gid,
			   mode_t mode, uint64_t dir, unsigned flags)
{
	int rc = SIDE(w)->set_owner ? SIDE(w)->set_owner(BE(be, w), w->in, uid, gid, mode, dir,
							  flags) : 0;

	if (rc == 0) {
		w->uid = uid;
		w->gid = gid;
		w->mode = mode;
		w->dir = dir;
	}
	return rc;
}

static int tiers_copy_in(struct tfs_backend *be, struct tfs_alloc *w, uint64_t off,
			 const void *src, size_t len)
{
	return SIDE(w)->copy_in(BE(be, w), w->in, off, src, len);
}

static int tiers_copy_out(struct tfs_backend *be, struct tfs_alloc *w, uint64_t off,
			  void *dst, size_t len)
{
	return SIDE(w)->copy_out(BE(be, w), w->in, off, dst, len);
}

static int tiers_copy_in_fd(struct tfs_backend *be, struct tfs_alloc *w, uint64_t off, int fd,
			    uint64_t foff, size_t len)
{
	if (!SIDE(w)->copy_in_fd)
		return -ENOTSUP;
	return SIDE(w)->copy_in_fd(BE(be, w), w->in, off, fd, foff, len);
}

static void tiers_stats(struct tfs_backend *be, int device, struct tfs_backend_stats *st)
{
	if (device == TFS_DEVICE_CPU)
		H->stats(be->host, device, st);
	else
		main_ops->stats(be->main, device, st);
}

static int tiers_wait_mark(struct tfs_backend *be, int device,
			   const uint8_t mark[TFS_IPC_HANDLE_SIZE])
{
	if (device == TFS_DEVICE_CPU || !main_ops->wait_mark)
		return 0;
	return main_ops->wait_mark(be->main, device, mark);
}

static void *tiers_io_region(struct tfs_backend *be, size_t bytes)
{
	return main_ops->io_region ? main_ops->io_region(be->main, bytes) : NULL;
}

static int tiers_read_fd(struct tfs_backend *be, struct tfs_alloc *w, uint64_t off, size_t len,
			 int *fd, off_t *pos)
{
	if (!SIDE(w)->read_fd)
		return -ENOTSUP;
	return SIDE(w)->read_fd(BE(be, w), w->in, off, len, fd, pos);
}

static int tiers_read_mem(struct tfs_backend *be, struct tfs_alloc *w, uint64_t off,
			  size_t len, const void **mem)
{
	if (!SIDE(w)->read_mem)
		return -ENOTSUP;
	return SIDE(w)->read_mem(BE(be, w), w->in, off, len, mem);
}

static int tiers_host_span(struct tfs_backend *be, struct tfs_alloc *w, uint64_t off,
			   size_t len, int wr, struct tfs_guard_span *span)
{
	if (!SIDE(w)->host_span)
		return -ENOTSUP;
	return SIDE(w)->host_span(BE(be, w), w->in, off, len, wr, span);
}

static int tiers_host_span_end(struct tfs_backend *be, struct tfs_guard_span *span)
{
	(void)be;
	return H->host_span_end(NULL, span);  /* only the host side lends spans */
}

static int tiers_export_fd(struct tfs_backend *be, struct tfs_alloc *w, int writable, int *fd)
{
	if (!SIDE(w)->export_fd)
		return -ENOTSUP;
	return SIDE(w)->export_fd(BE(be, w), w->in, writable, fd);
}

static int tiers_export_chunks(struct tfs_backend *be, struct tfs_alloc *w, int writable,
			       int *fds, uint64_t *sizes, int max)
{
	int rc;

	if (SIDE(w)->export_chunks)
		return SIDE(w)->export_chunks(BE(be, w), w->in, writable, fds, sizes, max);
	if (!SIDE(w)->export_fd)
		return -ENOTSUP;
	if (max < 1)
		return -E2BIG;
	rc = SIDE(w)->export_fd(BE(be, w), w->in, writable, fds);
	sizes[0] = 0;       /* one descriptor: the whole memory */
	return rc < 0 ? rc : 1;
}

static int tiers_grows_in_place(struct tfs_backend *be, struct tfs_alloc *w, uint64_t new_bytes)
{
	return SIDE(w)->grows_in_place &&
	       SIDE(w)->grows_in_place(BE(be, w), w->in, new_bytes);
}

static int tiers_adopt(struct tfs_backend *be, const struct tfs_meta *m, struct tfs_alloc **out)
{
	int host = m->device == TFS_DEVICE_CPU;
	struct tfs_alloc *in, *w;
	int rc;

	rc = host ? H->adopt(be->host, m, &in) : main_ops->adopt(be->main, m, &in);
	if (rc)
		return rc;
	if (!(w = wrap(be, in, m->device, m->bytes, m->uid, m->gid, m->mode, m->dir))) {
		(host ? H : main_ops)->free(host ? be->host : be->main, in);
		return -ENOMEM;
	}
	*out = w;
	return 0;
}

static int tiers_adopt_end(struct tfs_backend *be)
{
	return main_ops->adopt_end(be->main) + H->adopt_end(be->host);
}

/* Between the host tier and a device: the bytes copied piece by piece and summed on the
 * host side (one DMA per batch where the host memory is registered, else staged through
 * copy_in/copy_out), the commit, then the old memory freed (backend.h move_sum). */
static int cross(struct tfs_backend *be, struct tfs_alloc *w, int device, uint64_t *sum,
		 void (*commit)(void *arg), void *arg)
{
	int to_host = device == TFS_DEVICE_CPU, from = w->device;
	struct tfs_alloc *n, old;
	uint64_t acc = TFS_SUM_EMPTY, mapped;
	struct tfs_alloc *hw, *dw;     /* the host side's and the device side's */
	uint8_t *h;
	int rc;

	/* Every byte of the new memory is copied over: a pool's need not be zeroed first. */
	if (to_host)
		rc = tfs_host_alloc_uninit(be->host, device, w->bytes, w->uid, w->gid, w->mode,
					   w->dir, &n);
	else
		rc = tiers_alloc(be, device, w->bytes, w->uid, w->gid, w->mode, w->dir, &n);
	if (rc)
		return rc;
	if (to_host) {
		struct tfs_alloc *in = n;

		if (!(n = wrap(be, in, device, w->bytes, w->uid, w->gid, w->mode, w->dir))) {
			H->free(be->host, in);
			return -ENOMEM;
		}
	}
	hw = to_host ? n : w;
	dw = to_host ? w : n;
	pin(be, hw);
	h = tfs_host_mem(hw->in, &mapped);
	if ((hw->pinned || tfs_host_mem_pinned(hw->in)) && main_ops->copy_host_sum) {
		rc = main_ops->copy_host_sum(be->main, dw->in, 0, h, w->bytes, !to_host, &acc);
	} else {
		for (uint64_t off = 0; off < w->bytes && rc == 0; off += TFS_SUM_PIECE) {
			size_t len = w->bytes - off < TFS_SUM_PIECE ? (size_t)(w->bytes - off) :
				     TFS_SUM_PIECE;

			if (to_host)
				rc = main_ops->copy_out(be->main, dw->in, off, h + off, len);
			if (rc == 0)
				acc = tfs_sum_add(acc, tfs_sum_piece(h + off, len, off));
			if (rc == 0 && !to_host)
				rc = main_ops->copy_in(be->main, dw->in, off, h + off, len);
		}
	}
	acc = tfs_sum_final(acc);
	if (rc == 0 && *sum && acc != *sum)
		rc = -EBADMSG;
	if (rc) {
		tiers_free(be, n);
		return rc;
	}
	old = *w;
	*w = *n;
	free(n);
	*sum = acc;
	if (commit)
		commit(arg);
	unpin(be, &old);
	SIDE(&old)->free(BE(be, &old), old.in);
	/* A sleep frees the GPU for other programs: nothing kept for reuse. */
	if (to_host && main_ops->release_cached)
		main_ops->release_cached(be->main, from);
	return 0;
}

static int tiers_move_sum(struct tfs_backend *be, struct tfs_alloc *w, int device,
			  uint64_t *sum, void (*commit)(void *arg), void *arg)
{
	if (device == TFS_DEVICE_CPU ? w->host : !w->host) {
		int rc;

		if (w->host)
			return 0;
		*sum = 0;
		/* Between GPUs: the record is written before the old memory goes, as across. */
		rc = main_ops->move_sum ? main_ops->move_sum(be->main, w->in, device, sum, commit,
							     arg) :
		     main_ops->move ? main_ops->move(be->main, w->in, device) : -EBUSY;
		if (rc == 0)
			w->device = device;
		return rc;
	}
	if (device != TFS_DEVICE_CPU &&
	    (device < 0 || device >= main_ops->device_count(be->main)))
		return -EINVAL;
	return cross(be, w, device, sum, commit, arg);
}

static int tiers_move(struct tfs_backend *be, struct tfs_alloc *w, int device)
{
	uint64_t sum = 0;

	return tiers_move_sum(be, w, device, &sum, NULL, NULL);
}

const struct tfs_backend_ops tfs_backend_tiers = {
	.name = "tiers",        /* tfs_tiers_wrap's copy takes its main backend's */
	.init = tiers_init,
	.fini = tiers_fini,
	.set_caps = tiers_set_caps,
	.device_count = tiers_device_count,
	.alloc = tiers_alloc,
	.free = tiers_free,
	.resize = tiers_resize,
	.export_handle = tiers_export,
	.set_owner = tiers_set_owner,
	.copy_in = tiers_copy_in,
	.copy_out = tiers_copy_out,
	.copy_in_fd = tiers_copy_in_fd,
	.stats = tiers_stats,
	.move = tiers_move,
	.move_sum = tiers_move_sum,
	.wait_mark = tiers_wait_mark,
	.io_region = tiers_io_region,
	.read_fd = tiers_read_fd,
	.read_mem = tiers_read_mem,
	.host_span = tiers_host_span,
	.host_span_end = tiers_host_span_end,
	.adopt = tiers_adopt,
	.adopt_end = tiers_adopt_end,
	.export_fd = tiers_export_fd,
	.export_chunks = tiers_export_chunks,
	.grows_in_place = tiers_grows_in_place,
};
