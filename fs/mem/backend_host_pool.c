/* The host backend's preallocated pools (docs/tiers.md#preallocation, host_pool.h): for
 * each tier --preallocate names, segments reserved at start, each an object of the keeper
 * (struct tfs_alloc without a chunk) mapped once and registered with the device driver
 * once (the pin hook), out of which the tier's tensors are carved; their adoption after a
 * restart. */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "meta.h"
#include "mem/host_internal.h"
#include "mem/host_mem.h"
#include "mem/tiers.h"
#include "tier.h"
#include "util/guard.h"

/* Registration of host memory with a device driver (host_mem.h tfs_host_pin_hook). */
static int (*pin_reg)(void *ctx, void *p, size_t len);
static void (*pin_unreg)(void *ctx, void *p);
static void *pin_ctx;

void tfs_host_pin_hook(int (*reg)(void *ctx, void *p, size_t len),
		       void (*unreg)(void *ctx, void *p), void *ctx)
{
	pin_reg = reg;
	pin_unreg = unreg;
	pin_ctx = ctx;
}

/* Once a's bytes are copied into n: a takes n's memory and n a's old memory, for the
 * caller to free. a's address, which the tensor holds, stays. */
void hb_take_over(struct tfs_alloc *a, struct tfs_alloc *n)
{
	struct tfs_alloc old = *a;

	*a = *n;
	*n = old;
}

int hb_move_lent(struct tfs_backend *be, struct tfs_alloc *a, uid_t uid, gid_t gid,
		 mode_t mode, uint64_t dir)
{
	int device = a->slot == be->ndev ? TFS_DEVICE_CPU : a->slot, rc;
	struct tfs_alloc *n, old;

	if ((rc = tfs_host_alloc_uninit(be, device, a->bytes, uid, gid, mode, dir, &n)))
		return rc;
	hb_prefault(n->base, a->bytes);
	if ((rc = hb_copied(a, tfs_guarded_copy(n->base, a->base, a->bytes)))) {
		tfs_backend_host.free(be, n);
		return rc;
	}
	/* The spans name a, not its memory: a keeps its count and n takes the old memory.
	 * Under the lock, as host_span_end counts the spans down there. */
	pthread_mutex_lock(&be->lock);
	old = *a;
	*a = *n;
	a->spans = old.spans;
	a->freed = 0;
	a->retired = NULL;
	*n = old;
	n->spans = 0;
	if (old.spans) {
		a->retired = n;      /* n->retired: what a had retired before */
		n = NULL;
	}
	pthread_mutex_unlock(&be->lock);
	if (n)                       /* the last span ended meanwhile */
		tfs_backend_host.free(be, n);
	return 0;
}

/* --- The pool of a preallocated tier (host_pool.h): its segments are objects of their
 * own, struct tfs_alloc without a chunk, mapped once and registered once. --- */

static void seg_pin(struct tfs_alloc *s)
{
	static int said;

	if (!pin_reg || s->pinned)
		return;
	if (pin_reg(pin_ctx, s->base, s->mapped) == 0)
		s->pinned = 1;
	else if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		tfs_log(LOG_WARNING, "host: a pool segment could not be registered with the "
			"driver: its copies are staged");
}

static void seg_unmap(struct tfs_alloc *s)
{
	if (s->pinned && pin_unreg)
		pin_unreg(pin_ctx, s->base);
	s->pinned = 0;
	munmap(s->base, s->mapped);
}

/* Maps and registers an object held in s->fd of size bytes as a segment of slot. */
static int seg_map(struct tfs_alloc *s, uint64_t size, int slot)
{
	s->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->base == MAP_FAILED)
		return -ENOSPC;
	s->bytes = s->mapped = size;
	s->slot = slot;
	/* The reservation is pages in memory, not a promise: fault them all in now. */
	(void)tfs_populate(s->base, size, MADV_POPULATE_WRITE);
	seg_pin(s);
	return 0;
}

/* A new segment's pages written once, a byte each (they hold zeros, and nobody else may
 * open the object yet): some virtual machines give a guest page its memory only at the
 * first write a program makes to it, even after MADV_POPULATE_WRITE, a fault of the host
 * per page (3.5 us here, tests/bench/RESULTS-ucx.md) that would otherwise fall on the
 * first copy into the segment, a replica's network thread among them. On other machines
 * a store per page, nothing. */
static void seg_touch(char *p, uint64_t size, uint64_t page)
{
	for (uint64_t o = 0; o < size; o += page)
		((volatile char *)p)[o] = 0;
}

static int seg_make(void *ctx, uint64_t size, void **seg, void **base)
{
	struct htier *t = ctx;
	struct tfs_alloc *s;
	int rc;

	if ((rc = hb_chargeable(t->be, t->slot, size)) || (rc = hb_charge(t->be, t->slot, 0,
								    (int64_t)size)))
		return rc;
	if (!(s = calloc(1, sizeof(*s)))) {
		rc = -ENOMEM;
		goto fail_charge;
	}
	if ((rc = hb_obtain(s, size, geteuid(), getegid(), 0600)))
		goto fail_struct;
	if ((rc = seg_map(s, size, t->slot))) {
		s->mapped = size;
		hb_give_back(s);
		goto fail_struct;
	}
	seg_touch(s->base, size, t->be->page);
	*seg = s;
	*base = s->base;
	return 0;
fail_struct:
	free(s);
fail_charge:
	hb_charge(t->be, t->slot, 0, -(int64_t)size);
	return rc;
}

static void seg_drop(void *ctx, void *seg, uint64_t size)
{
	struct htier *t = ctx;
	struct tfs_alloc *s = seg;

	seg_unmap(s);
	hb_give_back(s);
	hb_charge(t->be, t->slot, 0, -(int64_t)size);
	free(s);
}

static void seg_leave(void *ctx, void *seg)
{
	struct tfs_alloc *s = seg;

	(void)ctx;
	seg_unmap(s);
	close(s->fd);
	free(s);
}

static const struct tfs_host_seg_ops seg_ops = { seg_make, seg_drop, seg_leave };

/* The pools of the tiers --preallocate names, made (and, on a fresh start, filled) by
 * host_init; a restart fills them in host_adopt_end, after taking back what the keeper
 * kept. */
int hb_start_pools(struct tfs_backend *be, int fill)
{
	for (int i = 0; i <= be->ndev; i++) {
		struct htier *t = &be->tier[i];
		int dev = i == be->ndev ? TFS_DEVICE_CPU : i, rc;

		t->be = be;
		t->slot = i;
		t->prealloc = tfs_tier_size(&tfs_mem.prealloc, dev);
		if (!t->prealloc)
			continue;
		t->prealloc = hb_round_page(be, t->prealloc);
		t->pool = tfs_host_pool_new(tfs_host_pool_seg_size(t->prealloc, be->page),
					    be->page, &seg_ops, t);
		if (!t->pool)
			return -ENOMEM;
		if (fill && (rc = tfs_host_pool_reserve(t->pool, t->prealloc))) {
			tfs_log(LOG_ERR, "host: cannot preallocate %llu MiB for tier %d: %s",
				(unsigned long long)(t->prealloc >> 20), dev, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

void hb_stop_pools(struct tfs_backend *be)
{
	for (int i = 0; i <= be->ndev; i++) {
		tfs_host_pool_destroy(be->tier[i].pool);
		be->tier[i].pool = NULL;
	}
}

/* A tensor carved from slot's pool, zeroed or not (a move writes every byte). */
int hb_pool_alloc(struct tfs_backend *be, int slot, uint64_t bytes, uint64_t room,
		      uid_t uid, gid_t gid, mode_t mode, uint64_t dir, int zero,
		      struct tfs_alloc **out)
{
	struct htier *t = &be->tier[slot];
	struct tfs_pool_chunk *c;
	struct tfs_alloc *a, *s;
	void *seg;
	int first, rc;

	if (bytes > (uint64_t)INT64_MAX - be->page)
		return -EFBIG;
	if (!(a = calloc(1, sizeof(*a))))
		return -ENOMEM;
	rc = tfs_host_pool_alloc(t->pool, tfs_host_pool_key(uid, gid, mode, dir), bytes, room,
				 zero, &c, &seg, &first);
	if (rc) {
		free(a);
		return rc;
	}
	s = seg;
	/* A segment given to its key for the first time becomes its tensors' object: who
	 * opens it by name gets what the mount gives them (host_set_owner's rule). */
	if (first && ((fchown(s->fd, uid, gid) && (errno != EPERM || geteuid() == 0)) ||
		      fchmod(s->fd, mode & 0666))) {
		rc = -errno;
		tfs_host_pool_free(t->pool, c);
		free(a);
		return rc;
	}
	*a = (struct tfs_alloc){ .fd = -1, .chunk = c, .seg = s, .slot = slot, .bytes = bytes,
				 .base = (void *)(uintptr_t)tfs_pool_chunk_addr(c),
				 .mapped = tfs_pool_chunk_capacity(c), .uid = uid, .gid = gid,
				 .mode = mode, .dir = dir };
	memcpy(a->name, s->name, sizeof(a->name));
	hb_charge(be, slot, (int64_t)bytes, 0);
	__atomic_add_fetch(&t->nallocs, 1, __ATOMIC_RELAXED);
	*out = a;
	return 0;
}

void hb_pool_free(struct tfs_backend *be, struct tfs_alloc *a)
{
	tfs_host_pool_free(be->tier[a->slot].pool, a->chunk);
	hb_charge(be, a->slot, -(int64_t)a->bytes, 0);
	__atomic_sub_fetch(&be->tier[a->slot].nallocs, 1, __ATOMIC_RELAXED);
	free(a);
}

/* A pooled tensor's new size: in place while its chunk has room or the free space behind
 * it does (what grows is zeroed: a shrink or a freed tensor left bytes there), else a
 * chunk with room to grow into (a cp appends), the bytes copied, the old chunk freed.
 * Growing in place first keeps a tensor written by appends whole in one run instead of
 * moving it from piece to piece as it outgrows each. */
int hb_pool_resize(struct tfs_backend *be, struct tfs_alloc *a, uint64_t bytes)
{
	struct tfs_alloc *n;
	int rc;

	if (bytes > a->mapped &&
	    tfs_host_pool_grow(be->tier[a->slot].pool, a->chunk, bytes) == 0)
		a->mapped = tfs_pool_chunk_capacity(a->chunk);
	if (bytes <= a->mapped) {
		if (bytes > a->bytes)
			memset((char *)a->base + a->bytes, 0, bytes - a->bytes);
		hb_charge(be, a->slot, (int64_t)bytes - (int64_t)a->bytes, 0);
		a->bytes = bytes;
		return 0;
	}
	if ((rc = hb_pool_alloc(be, a->slot, bytes, tfs_pool_growth_room(a->bytes, bytes), a->uid,
			     a->gid, a->mode, a->dir, 0, &n)))
		return rc;
	if ((rc = hb_copied(a, tfs_guarded_copy(n->base, a->base, a->bytes)))) {
		hb_pool_free(be, n);
		return rc;
	}
	memset((char *)n->base + a->bytes, 0, n->mapped - a->bytes);
	hb_take_over(a, n);
	hb_pool_free(be, n);
	return 0;
}

/* A found object as a segment of slot (not yet the pool's): its mapping, registered. */
static struct tfs_alloc *found_seg(struct tfs_backend *be, int slot, struct found *f)
{
	struct tfs_alloc *s;
	struct stat st;

	if (fstat(f->fd, &st) || st.st_size <= 0 || (uint64_t)st.st_size % be->page ||
	    !(s = calloc(1, sizeof(*s))))
		return NULL;
	s->fd = f->fd;
	s->kid = f->id;
	snprintf(s->name, sizeof(s->name), "%s", f->name);
	if (seg_map(s, (uint64_t)st.st_size, slot)) {
		free(s);
		return NULL;
	}
	return s;
}

/* host_adopt in a preallocated tier: the record's bytes at its offset of a segment, which
 * the first of its tensors brings into the pool. */
int hb_pool_adopt(struct tfs_backend *be, int slot, struct found *f,
		      const struct tfs_meta *m, struct tfs_alloc **out)
{
	struct htier *t = &be->tier[slot];
	struct tfs_alloc *a, *s = f->seg;
	struct tfs_pool_chunk *c;
	int rc, made = 0;

	if (m->bytes == 0 || m->bytes > (uint64_t)INT64_MAX - be->page)
		return -EINVAL;
	if (!s) {
		if (!(s = found_seg(be, slot, f)))
			return -EINVAL;
		made = 1;
	}
	if (!(a = calloc(1, sizeof(*a)))) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = tfs_host_pool_adopt(t->pool, tfs_host_pool_key(m->uid, m->gid, m->mode, m->dir),
				 s, s->base, s->mapped, m->ipc_offset, m->bytes, &c);
	if (rc) {
		free(a);
		goto fail;
	}
	if (made) {
		f->seg = s;
		f->fd = -1;
		hb_charge_force(be, slot, 0, (int64_t)s->mapped);
	}
	*a = (struct tfs_alloc){ .fd = -1, .chunk = c, .seg = s, .slot = slot,
				 .bytes = m->bytes, .base = (void *)(uintptr_t)tfs_pool_chunk_addr(c),
				 .mapped = tfs_pool_chunk_capacity(c), .uid = m->uid, .gid = m->gid,
				 .mode = m->mode, .dir = m->dir };
	memcpy(a->name, s->name, sizeof(a->name));
	hb_charge_force(be, slot, (int64_t)m->bytes, 0);
	__atomic_add_fetch(&t->nallocs, 1, __ATOMIC_RELAXED);
	*out = a;
	return 0;
fail:
	if (made) {
		seg_unmap(s);
		free(s);
	}
	return rc;
}

/* An object no record took, of the size of a segment or a run of a preallocated tier
 * that it fits in beside what the tier holds: it joins that tier's reserve
 * (host_adopt_end). 1 when it did. */
int hb_pool_take_found(struct tfs_backend *be, struct found *f)
{
	struct stat st;

	/* Only a segment no key was ever given: one that was may still be mapped by its
	 * readers, who must not see what the next tenant writes. The reserve's are the
	 * daemon's user's, mode 0600 (whose readers can read every object anyway). */
	if (fstat(f->fd, &st) || st.st_uid != geteuid() || (st.st_mode & 077))
		return 0;
	for (int i = 0; i <= be->ndev; i++) {
		struct htier *t = &be->tier[i];
		uint64_t held, live, seg;
		struct tfs_alloc *s;

		if (!t->pool)
			continue;
		seg = tfs_host_pool_seg_size(t->prealloc, be->page);
		tfs_host_pool_stats(t->pool, &held, &live);
		if (!tfs_host_pool_piece_ok(t->pool, (uint64_t)st.st_size) ||
		    held + (uint64_t)st.st_size > (t->prealloc + seg - 1) / seg * seg)
			continue;
		if (!(s = found_seg(be, i, f)))
			return 0;
		if (tfs_host_pool_give(t->pool, s, s->base, s->mapped)) {
			seg_unmap(s);
			free(s);
			return 0;
		}
		hb_charge_force(be, i, 0, (int64_t)s->mapped);
		f->fd = -1;
		return 1;
	}
	return 0;
}

/* A pooled tensor's new owner, mode or directory: its segment is its key's, so another
 * key means another segment (backend.h set_owner: the handle changes). */
int hb_pool_set_owner(struct tfs_backend *be, struct tfs_alloc *a, uid_t uid, gid_t gid,
		      mode_t mode, uint64_t dir, unsigned flags)
{
	struct tfs_alloc *n;
	int rc;

	if (a->uid == uid && a->gid == gid && (a->mode & 07777) == (mode & 07777) &&
	    a->dir == dir)
		return 0;
	if (flags & TFS_BE_NOMOVE)
		return -EBUSY;
	if ((rc = hb_pool_alloc(be, a->slot, a->bytes, 0, uid, gid, mode, dir, 0, &n)))
		return rc;
	if ((rc = hb_copied(a, tfs_guarded_copy(n->base, a->base, a->bytes)))) {
		hb_pool_free(be, n);
		return rc;
	}
	hb_take_over(a, n);
	hb_pool_free(be, n);
	return 0;
}
