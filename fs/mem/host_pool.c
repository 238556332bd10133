/* The preallocated pool of a host-memory tier (host_pool.h): the CUDA pool's carving
 * (pool.c) over shared-memory segments, with a reserve of segments made at start that no
 * key was given yet, and what each segment holds that is not known to be zero
 * (dirty_ranges.h), so that a create zeroes only that. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mem/dirty_ranges.h"
#include "mem/host_pool.h"

#define GiB (1024ull * 1024 * 1024)
#define MiB2 (2ull * 1024 * 1024)

/* A segment or a run: idle in the reserve, or a block of the pool (its cookie). */
struct hseg {
	struct hseg *next, *prev; /* the reserve (next only), or the pool's blocks */
	void *seg, *base;         /* the backend's object, its mapping */
	uint64_t size;            /* a segment or a run of them (pool.h) */
	/* What may not be zero: its free space's, and a live chunk's once it is freed. A
	 * live chunk's range is left out (its owner zeroes or writes it). */
	struct tfs_dirty dirty;
};

struct tfs_host_pool {
	pthread_mutex_t mu;       /* around every pool.c call: get learns who asked */
	struct tfs_pool *pool;
	struct tfs_host_seg_ops ops;
	void *ctx;
	uint64_t seg, page;
	struct hseg *idle;        /* the reserve: segments and runs no key has had */
	struct hseg *segs;        /* the pool's blocks, for adoption to find */
	uint64_t held, live;
	void *given;              /* the segment get handed out during this call */
	int leaving;              /* destroy: put lets go instead of dropping */
};

uint64_t tfs_host_pool_seg_size(uint64_t bytes, uint64_t page)
{
	uint64_t s = bytes / 8;

	if (s < MiB2)
		s = MiB2;
	if (s > GiB)
		s = GiB;
	return (s + page - 1) / page * page;
}

/* The smallest idle piece of the reserve that holds size bytes, unlinked; NULL if none. */
static struct hseg *idle_take(struct tfs_host_pool *p, uint64_t size)
{
	struct hseg **pp, **best = NULL;
	struct hseg *i;

	for (pp = &p->idle; *pp; pp = &(*pp)->next)
		if ((*pp)->size >= size && (!best || (*pp)->size < (*best)->size))
			best = pp;
	if (!best)
		return NULL;
	i = *best;
	*best = i->next;
	return i;
}

static void segs_link(struct tfs_host_pool *p, struct hseg *h)
{
	h->prev = NULL;
	h->next = p->segs;
	if (p->segs)
		p->segs->prev = h;
	p->segs = h;
}

static void segs_unlink(struct tfs_host_pool *p, struct hseg *h)
{
	if (h->prev)
		h->prev->next = h->next;
	else
		p->segs = h->next;
	if (h->next)
		h->next->prev = h->prev;
}

static int seg_get(void *ctx, uint64_t *size, uint64_t *base, void **cookie)
{
	struct tfs_host_pool *p = ctx;
	struct hseg *i;
	void *b;
	int rc;

	/* A tensor up to a segment asks for a segment, a larger one for its size: the
	 * smallest idle piece that holds it serves either, a run given whole to the key
	 * (its handle maps all of it). */
	if ((i = idle_take(p, *size))) {
		*size = i->size;
		*base = (uint64_t)(uintptr_t)i->base;
		*cookie = p->given = i;
		segs_link(p, i);
		return 0;
	}
	/* No piece is large enough: fresh memory. The tier's cap counts idle pieces too:
	 * when it is what stands in the way, they go first, the smallest first (a run left
	 * may still serve the next large tensor). */
	if (!(i = calloc(1, sizeof(*i))))
		return -ENOMEM;
	while ((rc = p->ops.make(p->ctx, *size, &i->seg, &b)) == -ENOSPC) {
		struct hseg *d = idle_take(p, 0);

		if (!d)
			break;
		p->ops.drop(p->ctx, d->seg, d->size);
		p->held -= d->size;
		free(d);
	}
	if (rc) {
		free(i);
		return rc;
	}
	i->base = b;
	i->size = *size;
	tfs_dirty_init(&i->dirty);     /* fresh pages: zeros */
	p->held += *size;
	*base = (uint64_t)(uintptr_t)b;
	*cookie = p->given = i;
	segs_link(p, i);
	return 0;
}

static void seg_put(void *ctx, uint64_t base, uint64_t size, void *cookie)
{
	struct tfs_host_pool *p = ctx;
	struct hseg *h = cookie;

	(void)base;
	segs_unlink(p, h);
	if (p->leaving)
		p->ops.leave(p->ctx, h->seg);
	else
		p->ops.drop(p->ctx, h->seg, size);
	p->held -= size;
	free(h);
}

struct tfs_host_pool *tfs_host_pool_new(uint64_t seg, uint64_t page,
					const struct tfs_host_seg_ops *ops, void *ctx)
{
	static const struct tfs_pool_block_ops bops = { seg_get, seg_put };
	struct tfs_pool_config cfg;
	struct tfs_host_pool *p;

	if (!seg || !page || seg % page)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	/* One class of segments and runs: every tensor shares them, so a model's small
	 * tensors do not hold a segment apart from its large ones. Never dropped for being
	 * empty (cache_max): a tensor that wakes and sleeps again finds its memory, registered
	 * with the driver, where it left it. */
	tfs_pool_config_prealloc(&cfg, seg);
	cfg.align = page;
	cfg.large_round = page;
	p->ops = *ops;
	p->ctx = ctx;
	p->seg = seg;
	p->page = page;
	pthread_mutex_init(&p->mu, NULL);
	if (!(p->pool = tfs_pool_new(&cfg, &bops, p))) {
		pthread_mutex_destroy(&p->mu);
		free(p);
		return NULL;
	}
	return p;
}

void tfs_host_pool_destroy(struct tfs_host_pool *p)
{
	if (!p)
		return;
	p->leaving = 1;
	tfs_pool_destroy(p->pool);
	while (p->idle) {
		struct hseg *i = p->idle;

		p->idle = i->next;
		p->ops.leave(p->ctx, i->seg);
		free(i);
	}
	pthread_mutex_destroy(&p->mu);
	free(p);
}

/* clean: the object is fresh from the kernel (make), else nobody vouches for it. */
static int add_idle(struct tfs_host_pool *p, void *seg, void *base, uint64_t size, int clean)
{
	struct hseg *i = calloc(1, sizeof(*i));

	if (!i)
		return -ENOMEM;
	i->seg = seg;
	i->base = base;
	i->size = size;
	if (clean)
		tfs_dirty_init(&i->dirty);
	else
		tfs_dirty_init_all(&i->dirty, size);
	i->next = p->idle;
	p->idle = i;
	p->held += size;
	return 0;
}

int tfs_host_pool_reserve(struct tfs_host_pool *p, uint64_t bytes)
{
	uint64_t n, piece;
	int rc = 0;

	pthread_mutex_lock(&p->mu);
	/* What is missing, laid out as pool.h says (a restart makes only that). */
	n = p->held < bytes ? (bytes - p->held + p->seg - 1) / p->seg : 0;
	for (uint64_t k = 0; p->held < bytes && (piece = tfs_pool_prealloc_piece(n, k)); k++) {
		uint64_t size = piece * p->seg;
		void *seg, *base;

		if ((rc = p->ops.make(p->ctx, size, &seg, &base)))
			break;
		if ((rc = add_idle(p, seg, base, size, 1))) {
			p->ops.drop(p->ctx, seg, size);
			break;
		}
	}
	pthread_mutex_unlock(&p->mu);
	return rc;
}

int tfs_host_pool_piece_ok(const struct tfs_host_pool *p, uint64_t size)
{
	return size && size % p->seg == 0 && size / p->seg <= TFS_POOL_RUN_MAX;
}

int tfs_host_pool_give(struct tfs_host_pool *p, void *seg, void *base, uint64_t size)
{
	int rc;

	if (!tfs_host_pool_piece_ok(p, size))
		return -EINVAL;
	pthread_mutex_lock(&p->mu);
	rc = add_idle(p, seg, base, size, 0);
	pthread_mutex_unlock(&p->mu);
	return rc;
}

struct tfs_pool_key tfs_host_pool_key(uid_t uid, gid_t gid, mode_t mode, uint64_t dir)
{
	return (struct tfs_pool_key){ .a = (uint64_t)uid << 32 | gid, .b = mode & 07777,
				      .c = dir };
}

int tfs_host_pool_alloc(struct tfs_host_pool *p, struct tfs_pool_key key, uint64_t bytes,
			uint64_t room, int zero, struct tfs_pool_chunk **out, void **seg, int *first)
{
	struct tfs_dirty_range dirt[TFS_DIRTY_MAX];
	struct tfs_pool_chunk *c;
	struct hseg *h;
	unsigned n = 0;
	uint64_t off;
	int rc;

	pthread_mutex_lock(&p->mu);
	p->given = NULL;
	rc = tfs_pool_alloc(p->pool, key, bytes, room, &c);
	if (rc == 0) {
		h = tfs_pool_chunk_cookie(c);
		*seg = h->seg;
		*first = p->given == h;
		p->live += tfs_pool_chunk_capacity(c);
		off = tfs_pool_chunk_offset(c);
		n = tfs_dirty_take(&h->dirty, off, off + tfs_pool_chunk_capacity(c), dirt);
		if (!zero)
			n = 0;          /* a move: its caller writes every byte */
	}
	pthread_mutex_unlock(&p->mu);
	if (rc)
		return rc;
	/* Outside the lock: the chunk is the caller's alone. What a freed tensor left must
	 * not show; pages fresh from the kernel are zero already, and a memset of them would
	 * cost as much as one of dirty pages (91.9 ms a GiB on the H200, tests/bench). */
	for (unsigned i = 0; i < n; i++)
		memset((char *)h->base + dirt[i].start, 0, dirt[i].end - dirt[i].start);
	*out = c;
	return 0;
}

void tfs_host_pool_free(struct tfs_host_pool *p, struct tfs_pool_chunk *c)
{
	struct hseg *h = tfs_pool_chunk_cookie(c);
	uint64_t off = tfs_pool_chunk_offset(c);

	pthread_mutex_lock(&p->mu);
	/* Before the free: it may give the segment back (seg_put frees h). */
	tfs_dirty_add(&h->dirty, off, off + tfs_pool_chunk_capacity(c));
	p->live -= tfs_pool_chunk_capacity(c);
	tfs_pool_free(p->pool, c);
	pthread_mutex_unlock(&p->mu);
}

int tfs_host_pool_grow(struct tfs_host_pool *p, struct tfs_pool_chunk *c, uint64_t bytes)
{
	uint64_t cap;
	int rc;

	pthread_mutex_lock(&p->mu);
	cap = tfs_pool_chunk_capacity(c);
	if ((rc = tfs_pool_grow(p->pool, c, bytes)) == 0) {
		struct hseg *h = tfs_pool_chunk_cookie(c);
		uint64_t end = tfs_pool_chunk_offset(c) + cap;

		/* Live from now on: counted dirty again when the chunk is freed. */
		tfs_dirty_take(&h->dirty, end, end + tfs_pool_chunk_capacity(c) - cap, NULL);
		p->live += tfs_pool_chunk_capacity(c) - cap;
	}
	pthread_mutex_unlock(&p->mu);
	return rc;
}

void *tfs_host_pool_seg(const struct tfs_pool_chunk *c)
{
	return ((struct hseg *)tfs_pool_chunk_cookie(c))->seg;
}

int tfs_host_pool_adopt(struct tfs_host_pool *p, struct tfs_pool_key key, void *seg,
			void *base, uint64_t size, uint64_t off, uint64_t bytes,
			struct tfs_pool_chunk **out)
{
	struct tfs_pool_stats before, after;
	struct hseg *h;
	int rc, made = 0;

	pthread_mutex_lock(&p->mu);
	for (h = p->segs; h && h->seg != seg; h = h->next)
		;
	if (!h) {
		/* Its first tensor brings it in. What an earlier run left in its free space
		 * (freed tensors, a consumer's writes past its tensor) is unknown: all dirty. */
		rc = -ENOMEM;
		if (!(h = calloc(1, sizeof(*h))))
			goto out;
		h->seg = seg;
		h->base = base;
		h->size = size;
		tfs_dirty_init_all(&h->dirty, size);
		made = 1;
	}
	tfs_pool_get_stats(p->pool, &before);
	rc = tfs_pool_adopt(p->pool, key, (uint64_t)(uintptr_t)base, size, h, off, bytes, out);
	if (rc == 0) {
		tfs_pool_get_stats(p->pool, &after);
		if (made)
			segs_link(p, h);
		p->held += after.reserved - before.reserved;
		p->live += tfs_pool_chunk_capacity(*out);
		off = tfs_pool_chunk_offset(*out);
		tfs_dirty_take(&h->dirty, off, off + tfs_pool_chunk_capacity(*out), NULL);
	} else if (made) {
		free(h);               /* not the pool's */
	}
out:
	pthread_mutex_unlock(&p->mu);
	return rc;
}

void tfs_host_pool_stats(struct tfs_host_pool *p, uint64_t *held, uint64_t *live)
{
	pthread_mutex_lock(&p->mu);
	*held = p->held;
	*live = p->live;
	pthread_mutex_unlock(&p->mu);
}
