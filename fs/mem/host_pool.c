/* The preallocated pool of a host-memory tier (host_pool.h): the CUDA pool's carving
 * (pool.c) over shared-memory segments, with a reserve of segments made at start that no
 * key was given yet. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mem/host_pool.h"

#define GiB (1024ull * 1024 * 1024)
#define MiB2 (2ull * 1024 * 1024)

struct idle {
	struct idle *next;
	void *seg, *base;
	uint64_t size;            /* a segment or a run of them (pool.h) */
};

struct tfs_host_pool {
	pthread_mutex_t mu;       /* around every pool.c call: get learns who asked */
	struct tfs_pool *pool;
	struct tfs_host_seg_ops ops;
	void *ctx;
	uint64_t seg, page;
	struct idle *idle;        /* the reserve: segments and runs no key has had */
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
static struct idle *idle_take(struct tfs_host_pool *p, uint64_t size)
{
	struct idle **pp, **best = NULL;
	struct idle *i;

	for (pp = &p->idle; *pp; pp = &(*pp)->next)
		if ((*pp)->size >= size && (!best || (*pp)->size < (*best)->size))
			best = pp;
	if (!best)
		return NULL;
	i = *best;
	*best = i->next;
	return i;
}

static int seg_get(void *ctx, uint64_t *size, uint64_t *base, void **cookie)
{
	struct tfs_host_pool *p = ctx;
	struct idle *i;
	void *b;
	int rc;

	/* A tensor up to a segment asks for a segment, a larger one for its size: the
	 * smallest idle piece that holds it serves either, a run given whole to the key
	 * (its handle maps all of it). */
	if ((i = idle_take(p, *size))) {
		*size = i->size;
		*base = (uint64_t)(uintptr_t)i->base;
		*cookie = p->given = i->seg;
		free(i);
		return 0;
	}
	/* No piece is large enough: fresh memory. The tier's cap counts idle pieces too:
	 * when it is what stands in the way, they go first, the smallest first (a run left
	 * may still serve the next large tensor). */
	while ((rc = p->ops.make(p->ctx, *size, cookie, &b)) == -ENOSPC &&
	       (i = idle_take(p, 0))) {
		p->ops.drop(p->ctx, i->seg, i->size);
		p->held -= i->size;
		free(i);
	}
	if (rc)
		return rc;
	p->held += *size;
	*base = (uint64_t)(uintptr_t)b;
	p->given = *cookie;
	return 0;
}

static void seg_put(void *ctx, uint64_t base, uint64_t size, void *cookie)
{
	struct tfs_host_pool *p = ctx;

	(void)base;
	if (p->leaving)
		p->ops.leave(p->ctx, cookie);
	else
		p->ops.drop(p->ctx, cookie, size);
	p->held -= size;
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
		struct idle *i = p->idle;

		p->idle = i->next;
		p->ops.leave(p->ctx, i->seg);
		free(i);
	}
	pthread_mutex_destroy(&p->mu);
	free(p);
}

static int add_idle(struct tfs_host_pool *p, void *seg, void *base, uint64_t size)
{
	struct idle *i = malloc(sizeof(*i));

	if (!i)
		return -ENOMEM;
	i->seg = seg;
	i->base = base;
	i->size = size;
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
		if ((rc = add_idle(p, seg, base, size))) {
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
	rc = add_idle(p, seg, base, size);
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
	struct tfs_pool_chunk *c;
	int rc;

	pthread_mutex_lock(&p->mu);
	p->given = NULL;
	rc = tfs_pool_alloc(p->pool, key, bytes, room, &c);
	if (rc == 0) {
		*seg = tfs_pool_chunk_cookie(c);
		*first = p->given && p->given == *seg;
		p->live += tfs_pool_chunk_capacity(c);
	}
	pthread_mutex_unlock(&p->mu);
	if (rc)
		return rc;
	/* Outside the lock: the chunk is the caller's alone. A segment's pages were reserved
	 * when it was made; what a freed tensor left in them must not show. */
	if (zero)
		memset((void *)(uintptr_t)tfs_pool_chunk_addr(c), 0, tfs_pool_chunk_capacity(c));
	*out = c;
	return 0;
}

void tfs_host_pool_free(struct tfs_host_pool *p, struct tfs_pool_chunk *c)
{
	pthread_mutex_lock(&p->mu);
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
	if ((rc = tfs_pool_grow(p->pool, c, bytes)) == 0)
		p->live += tfs_pool_chunk_capacity(c) - cap;
	pthread_mutex_unlock(&p->mu);
	return rc;
}

void *tfs_host_pool_seg(const struct tfs_pool_chunk *c)
{
	return tfs_pool_chunk_cookie(c);
}

int tfs_host_pool_adopt(struct tfs_host_pool *p, struct tfs_pool_key key, void *seg,
			void *base, uint64_t size, uint64_t off, uint64_t bytes,
			struct tfs_pool_chunk **out)
{
	struct tfs_pool_stats before, after;
	int rc;

	pthread_mutex_lock(&p->mu);
	tfs_pool_get_stats(p->pool, &before);
	rc = tfs_pool_adopt(p->pool, key, (uint64_t)(uintptr_t)base, size, seg, off, bytes, out);
	if (rc == 0) {
		tfs_pool_get_stats(p->pool, &after);
		p->held += after.reserved - before.reserved;
		p->live += tfs_pool_chunk_capacity(*out);
	}
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
