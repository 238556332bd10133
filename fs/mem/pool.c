/* Sub-allocator of device memory blocks; see pool.h for the policy. No CUDA in here.
 * The structures are pool_internal.h's; the consistency check is pool_check.c. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem/pool.h"
#include "mem/pool_internal.h"

void tfs_pool_config_default(struct tfs_pool_config *cfg)
{
	cfg->align = 512;
	cfg->small_max = 1 * MiB;
	cfg->small_block = 2 * MiB;
	cfg->medium_max = 16 * MiB;
	cfg->medium_block = 32 * MiB;
	cfg->medium_grow = 3;
	cfg->large_round = 2 * MiB;
	cfg->near_fit = 0;
	cfg->cache_max = 1024 * MiB;
}

void tfs_pool_config_prealloc(struct tfs_pool_config *cfg, uint64_t seg)
{
	tfs_pool_config_default(cfg);
	cfg->small_max = cfg->medium_max = seg;
	cfg->small_block = cfg->medium_block = seg;
	cfg->medium_grow = 0;
	/* Blocks are never given back for being empty, so classes kept apart would only
	 * keep a key's small tensors out of the free end of its run. */
	cfg->near_fit = POOL_NEAR_ANY;
	cfg->cache_max = UINT64_MAX;
}

uint64_t tfs_pool_prealloc_piece(uint64_t n, uint64_t i)
{
	uint64_t h = n / 2, full = h / TFS_POOL_RUN_MAX, rest = h % TFS_POOL_RUN_MAX;
	uint64_t runs = full + (rest >= 2), in_runs = n - (full * TFS_POOL_RUN_MAX +
							    (rest >= 2 ? rest : 0));

	if (i < full)
		return TFS_POOL_RUN_MAX;
	if (i < runs)
		return rest;
	return i - runs < in_runs ? 1 : 0;
}

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

struct tfs_pool_key tfs_pool_reader_key(uint32_t uid, uint32_t gid, uint32_t mode,
					uint64_t dir)
{
	struct tfs_pool_key k;
	uint32_t r = mode & 0444;

	/* Group and others both reading (or neither): the group changes nothing, so tensors
	 * that differ only in it still share. */
	if (!(r & 0040) == !(r & 0004))
		gid = 0;
	k.a = (uint64_t)uid << 32 | gid;
	k.b = r;
	k.c = dir;
	return k;
}

struct tfs_pool_key tfs_pool_legacy_key(uint32_t uid, uint32_t gid, uint32_t mode)
{
	struct tfs_pool_key k;

	k.a = uid;
	if (mode & 0004)
		k.b = 1ull << 33;
	else if (mode & 0040)
		k.b = gid;
	else
		k.b = 1ull << 32;
	/* reader_key's b holds read bits only, below 1 << 9: the two never meet. */
	k.b |= 1ull << 34;
	k.c = 0;
	return k;
}

/* ---- free index ---- */

static int idx_reserve(struct findex *ix, size_t need)
{
	struct fent *v;
	size_t cap;

	if (need <= ix->cap)
		return 0;
	cap = ix->cap ? ix->cap : 16;
	while (cap < need)
		cap *= 2;
	v = realloc(ix->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	ix->v = v;
	ix->cap = cap;
	return 0;
}

/* Chunk count of an unretired block changed by d. */
static void need_adjust(struct block *b, long d)
{
	if (!b->retired)
		b->arena->idx[b->cls].need += (size_t)d;
}

/* A block joins (d = 1) or leaves (-1) the set of unretired blocks of its arena. */
static void need_block(struct block *b, long d)
{
	need_adjust(b, d * (long)b->nchunks);
	if (!b->retired && b->cls == CLS_LARGE)
		b->arena->idx[IDX_WHOLE].need += (size_t)d;
}

/* Index a free chunk; a no-op for retired blocks. Capacity was reserved beforehand. */
static void idx_add(struct tfs_pool_chunk *c)
{
	struct findex *ix;
	size_t i;

	if (c->blk->retired)
		return;
	ix = chunk_index(c);
	i = idx_lower(ix, c->size, c->blk->seq, c->off);
	memmove(&ix->v[i + 1], &ix->v[i], (ix->n - i) * sizeof(ix->v[0]));
	ix->v[i] = (struct fent){ c->size, c->blk->seq, c->off, c };
	ix->n++;
}

static void idx_del(struct tfs_pool_chunk *c)
{
	struct findex *ix;
	size_t i;

	if (c->blk->retired)
		return;
	ix = chunk_index(c);
	i = idx_lower(ix, c->size, c->blk->seq, c->off);
	if (i >= ix->n || ix->v[i].c != c)
		return;         /* cannot happen; tfs_pool_check reports it */
	memmove(&ix->v[i], &ix->v[i + 1], (ix->n - i - 1) * sizeof(ix->v[0]));
	ix->n--;
}

/* ---- blocks ---- */

static int class_of(const struct tfs_pool *p, uint64_t size)
{
	if (size <= p->cfg.small_max)
		return CLS_SMALL;
	if (size <= p->cfg.medium_max)
		return CLS_MEDIUM;
	return CLS_LARGE;
}

static void lru_remove(struct tfs_pool *p, struct block *b)
{
	if (!b->cached)
		return;
	if (b->lru_prev)
		b->lru_prev->lru_next = b->lru_next;
	else
		p->lru_head = b->lru_next;
	if (b->lru_next)
		b->lru_next->lru_prev = b->lru_prev;
	else
		p->lru_tail = b->lru_prev;
	b->lru_prev = b->lru_next = NULL;
	b->cached = 0;
	p->st.cached -= b->size;
}

static void lru_append(struct tfs_pool *p, struct block *b)
{
	b->lru_next = NULL;
	b->lru_prev = p->lru_tail;
	if (p->lru_tail)
		p->lru_tail->lru_next = b;
	else
		p->lru_head = b;
	p->lru_tail = b;
	b->cached = 1;
	p->st.cached += b->size;
}

/* The size of ar's next medium block: the first medium_block, doubled while it stays at
 * most half of what ar's medium blocks hold already (so at most a third of a key's medium
 * blocks is the newest one's unused tail), at most medium_grow times. */
static uint64_t medium_next(const struct tfs_pool *p, const struct arena *ar)
{
	uint64_t size = p->cfg.medium_block;

	for (unsigned k = 0; k < p->cfg.medium_grow && 2 * (size << 1) <= ar->medium_held; k++)
		size <<= 1;
	return size;
}

/* Is size one that a medium block of some key may have (alloc_locked)? */
static int medium_size(const struct tfs_pool *p, uint64_t size)
{
	for (unsigned k = 0; k <= p->cfg.medium_grow; k++)
		if (size == p->cfg.medium_block << k)
			return 1;
	return 0;
}

/* b's bytes join (sign 1) or leave (-1) its arena's medium_held: a medium block that
 * takes new tensors (retired ones take none, so they do not make the next one larger). */
static void held_adjust(struct block *b, int sign)
{
	if (b->cls == CLS_MEDIUM && !b->retired)
		b->arena->medium_held += sign > 0 ? b->size : -b->size;
}

static void arena_unlink(struct block *b)
{
	held_adjust(b, -1);
	if (b->prev)
		b->prev->next = b->next;
	else
		b->arena->blocks = b->next;
	if (b->next)
		b->next->prev = b->prev;
	b->prev = b->next = NULL;
}

static void arena_link(struct arena *ar, struct block *b)
{
	b->arena = ar;
	held_adjust(b, 1);
	b->prev = NULL;
	b->next = ar->blocks;
	if (ar->blocks)
		ar->blocks->prev = b;
	ar->blocks = b;
}

/* Give a block with nothing live (or, from destroy, anything) back to the backend. */
static void block_release(struct tfs_pool *p, struct block *b)
{
	struct tfs_pool_chunk *c, *n;

	lru_remove(p, b);
	need_block(b, -1);
	for (c = b->first; c; c = n) {
		n = c->next;
		if (c->free)
			idx_del(c);
		else
			p->st.used -= c->bytes, p->st.nallocs--;
		free(c);
	}
	arena_unlink(b);
	p->ops.put(p->ctx, b->base, b->size, b->cookie);
	p->st.reserved -= b->size;
	p->st.nblocks--;
	p->st.puts++;
	free(b);
}

static void cache_enforce(struct tfs_pool *p)
{
	while (p->st.cached > p->cfg.cache_max && p->lru_head)
		block_release(p, p->lru_head);
}

static void trim_locked(struct tfs_pool *p)
{
	while (p->lru_head)
		block_release(p, p->lru_head);
}

/* The block at base (from ops.get, or adopted) joins arena ar as one free chunk, indexed.
 * The indexes must have room for two more chunks of cls (this one and the split that
 * follows) and one more whole block. -ENOMEM: nothing changed, the memory is the
 * caller's. */
static int block_insert(struct tfs_pool *p, struct arena *ar, int cls, uint64_t size,
			uint64_t base, void *cookie, struct block **out)
{
	struct block *b = calloc(1, sizeof(*b));
	struct tfs_pool_chunk *c = calloc(1, sizeof(*c));

	if (!b || !c) {
		free(b);
		free(c);
		return -ENOMEM;
	}
	b->base = base;
	b->size = size;
	b->cookie = cookie;
	b->cls = cls;
	b->seq = ++p->seq;
	b->first = c;
	b->nchunks = 1;
	c->blk = b;
	c->size = size;
	c->free = 1;
	arena_link(ar, b);
	need_block(b, 1);
	idx_add(c);
	p->st.reserved += size;
	p->st.nblocks++;
	*out = b;
	return 0;
}

/* A new block of class cls whose single free chunk is indexed (as block_insert). */
static int block_new(struct tfs_pool *p, struct arena *ar, int cls, uint64_t size,
		     struct block **out)
{
	uint64_t base = 0, got = size;
	void *cookie = NULL;
	int rc;

	rc = p->ops.get(p->ctx, &got, &base, &cookie);
	if (rc == -ENOSPC || rc == -ENOMEM) {
		/* Memory is short: what the cache holds is worth more to the caller. */
		trim_locked(p);
		got = size;
		rc = p->ops.get(p->ctx, &got, &base, &cookie);
		if (rc == -ENOMEM)
			rc = -ENOSPC;
	}
	if (rc < 0)
		return rc;
	p->st.gets++;
	if (got < size || got % p->cfg.align) {
		p->ops.put(p->ctx, base, got, cookie);
		return -EIO;
	}
	/* A larger block than asked (a run of a reserve) is of no class's size: large, as
	 * tfs_pool_adopt classes it after a restart. */
	if (got != size)
		cls = CLS_LARGE;
	rc = block_insert(p, ar, cls, got, base, cookie, out);
	if (rc < 0)
		p->ops.put(p->ctx, base, got, cookie);
	return rc;
}

/* ---- arenas ---- */

static void arena_free(struct arena *ar)
{
	for (int k = 0; k < NIDX; k++)
		free(ar->idx[k].v);
	free(ar);
}

/* The arena of key, first in the list (the next allocation is likely of the same key).
 * With a key per directory, arenas come and go with directories: those left without a
 * block are freed on the way, here, where no caller holds a pointer to them. */
static struct arena *arena_get(struct tfs_pool *p, struct tfs_pool_key key)
{
	struct arena **pp = &p->arenas, *ar, *found = NULL;

	while ((ar = *pp)) {
		if (!found && key_eq(ar->key, key)) {
			*pp = ar->next;
			found = ar;
		} else if (!ar->blocks) {
			*pp = ar->next;
			arena_free(ar);
		} else {
			pp = &ar->next;
		}
	}
	if (found) {
		found->next = p->arenas;
		p->arenas = found;
		return found;
	}
	ar = calloc(1, sizeof(*ar));
	if (!ar)
		return NULL;
	ar->key = key;
	ar->next = p->arenas;
	p->arenas = ar;
	return ar;
}

/* ---- chunks ---- */

/* Best fit for room bytes among the free chunks a request of that size may use: any chunk
 * of blocks of the request's class, a large block with nothing live when it is at most
 * 1/8 + near_fit too big, and a chunk of another class when it is a near fit (no more than
 * near_fit too big).
 * Why classes stay apart: a small tensor placed in the free end of a large block keeps the
 * whole block alive after the large tensor goes. Filling those ends packs a one-off fill
 * better (reserved/requested 1.002 instead of 1.02 for the 10,000-tensor model in
 * tests/unit/test_pool.c) but under steady churn it strands the space of freed large
 * tensors (1.24 instead of 1.08), so near_fit is 0 by default. */
static struct tfs_pool_chunk *find_fit(struct tfs_pool *p, struct arena *ar, uint64_t room)
{
	int cls = class_of(p, room), k;
	struct tfs_pool_chunk *best = NULL;
	uint64_t near = room + p->cfg.near_fit;

	for (k = 0; k < NIDX; k++) {
		const struct findex *ix = &ar->idx[k];
		uint64_t limit = near;
		size_t i;

		if (k == cls)
			limit = UINT64_MAX;
		else if (k == IDX_WHOLE)
			limit = near + room / 8;
		i = idx_lower(ix, room, 0, 0);
		if (i < ix->n && ix->v[i].size <= limit && (!best || ix->v[i].size < best->size))
			best = ix->v[i].c;
	}
	return best;
}

/* Chunk c ends at at; r, a chunk struct of the caller's, becomes the free rest of it
 * behind c. Neither is indexed here: the caller keeps the indexes. */
static void split_at(struct tfs_pool_chunk *c, struct tfs_pool_chunk *r, uint64_t at)
{
	memset(r, 0, sizeof(*r));
	r->blk = c->blk;
	r->off = at;
	r->size = c->off + c->size - at;
	r->free = 1;
	r->prev = c;
	r->next = c->next;
	if (c->next)
		c->next->prev = r;
	c->next = r;
	c->size = at - c->off;
	c->blk->nchunks++;
	need_adjust(c->blk, 1);
}

/* Take the first need bytes of free chunk c, leaving the rest free behind it. spare is a
 * chunk struct for that rest (freed when not used); the index has room for it. */
static void carve(struct tfs_pool *p, struct tfs_pool_chunk *c, uint64_t need, uint64_t bytes,
		  struct tfs_pool_chunk **spare)
{
	struct block *b = c->blk;

	idx_del(c);
	lru_remove(p, b);
	b->nlive++;
	if (c->size > need) {
		struct tfs_pool_chunk *r = *spare;

		*spare = NULL;
		split_at(c, r, c->off + need);
		idx_add(r);
	}
	c->free = 0;
	c->bytes = bytes;
	p->st.used += bytes;
	p->st.nallocs++;
}

static int alloc_locked(struct tfs_pool *p, struct arena *ar, uint64_t bytes, uint64_t room,
			struct tfs_pool_chunk **out)
{
	uint64_t need = round_up(bytes, p->cfg.align);
	struct tfs_pool_chunk *c, *spare = NULL;
	int rc, cls;

	room = round_up(room < bytes ? bytes : room, p->cfg.align);
	spare = malloc(sizeof(*spare));
	if (!spare)
		return -ENOMEM;
	c = find_fit(p, ar, room);
	if (c) {
		struct findex *ix = &ar->idx[c->blk->cls];

		rc = idx_reserve(ix, ix->need + 1);
		if (rc < 0)
			goto out;
	} else {
		struct block *b;
		uint64_t size;

		cls = class_of(p, room);
		if (cls == CLS_SMALL)
			size = p->cfg.small_block;
		else if (cls == CLS_MEDIUM)
			size = medium_next(p, ar);
		else
			size = round_up(room, p->cfg.large_round);
		/* The block may come larger than asked, and so large (block_new). */
		rc = idx_reserve(&ar->idx[cls], ar->idx[cls].need + 2);
		if (rc == 0)
			rc = idx_reserve(&ar->idx[CLS_LARGE], ar->idx[CLS_LARGE].need + 2);
		if (rc == 0)
			rc = idx_reserve(&ar->idx[IDX_WHOLE], ar->idx[IDX_WHOLE].need + 1);
		if (rc < 0)
			goto out;
		rc = block_new(p, ar, cls, size, &b);
		/* A grown medium size may be more than the device has left: smaller ones, down
		 * to the first, before the request fails. */
		while (rc == -ENOSPC && cls == CLS_MEDIUM && size > p->cfg.medium_block)
			rc = block_new(p, ar, cls, size >>= 1, &b);
		if (rc < 0)
			goto out;
		c = b->first;
	}
	carve(p, c, need, bytes, &spare);
	*out = c;
	rc = 0;
out:
	free(spare);
	return rc;
}

/* Mark c free and merge it with free neighbours; releases or caches a block left empty. */
static void free_locked(struct tfs_pool *p, struct tfs_pool_chunk *c)
{
	struct block *b = c->blk;
	struct tfs_pool_chunk *n = c->next, *pv = c->prev;

	p->st.used -= c->bytes;
	p->st.nallocs--;
	c->bytes = 0;
	c->free = 1;
	/* Neighbours leave the index under the nlive they were indexed with. */
	if (n && n->free) {
		idx_del(n);
		c->size += n->size;
		c->next = n->next;
		if (n->next)
			n->next->prev = c;
		free(n);
		b->nchunks--;
		need_adjust(b, -1);
	}
	if (pv && pv->free) {
		idx_del(pv);
		pv->size += c->size;
		pv->next = c->next;
		if (c->next)
			c->next->prev = pv;
		free(c);
		c = pv;
		b->nchunks--;
		need_adjust(b, -1);
	}
	b->nlive--;
	idx_add(c);     /* cannot fail: capacity >= need is kept for every chunk */
	if (b->nlive)
		return;
	if (b->retired) {
		block_release(p, b);
		return;
	}
	lru_append(p, b);
	cache_enforce(p);
}

/* ---- public ---- */

struct tfs_pool *tfs_pool_new(const struct tfs_pool_config *cfg,
			      const struct tfs_pool_block_ops *ops, void *ctx)
{
	struct tfs_pool *p;
	struct tfs_pool_config c;

	if (cfg)
		c = *cfg;
	else
		tfs_pool_config_default(&c);
	if (!c.align || (c.align & (c.align - 1)) || c.small_block % c.align ||
	    c.medium_block % c.align || c.large_round % c.align ||
	    c.small_max > c.small_block || c.medium_max > c.medium_block || c.medium_grow > 8 ||
	    c.small_max > c.medium_max || !ops || !ops->get || !ops->put)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (pthread_mutex_init(&p->mu, NULL)) {
		free(p);
		return NULL;
	}
	p->cfg = c;
	p->ops = *ops;
	p->ctx = ctx;
	return p;
}

void tfs_pool_destroy(struct tfs_pool *p)
{
	struct arena *ar, *an;

	if (!p)
		return;
	for (ar = p->arenas; ar; ar = an) {
		an = ar->next;
		while (ar->blocks)
			block_release(p, ar->blocks);
		arena_free(ar);
	}
	pthread_mutex_destroy(&p->mu);
	free(p);
}

int tfs_pool_alloc(struct tfs_pool *p, struct tfs_pool_key key, uint64_t bytes, uint64_t room,
		   struct tfs_pool_chunk **out)
{
	struct arena *ar;
	int rc;

	if (!bytes)
		return -EINVAL;
	if (bytes > POOL_MAX_REQUEST || room > POOL_MAX_REQUEST)
		return -ENOSPC;
	pthread_mutex_lock(&p->mu);
	ar = arena_get(p, key);
	rc = ar ? alloc_locked(p, ar, bytes, room, out) : -ENOMEM;
	pthread_mutex_unlock(&p->mu);
	return rc;
}

void tfs_pool_free(struct tfs_pool *p, struct tfs_pool_chunk *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&p->mu);
	free_locked(p, c);
	pthread_mutex_unlock(&p->mu);
}

static struct block *block_at(struct tfs_pool *p, uint64_t base)
{
	for (struct arena *ar = p->arenas; ar; ar = ar->next)
		for (struct block *b = ar->blocks; b; b = b->next)
			if (b->base == base)
				return b;
	return NULL;
}

/* Free chunk c, indexed, is cut at off (c->off < off < its end) into two free chunks. The
 * index must have room for one more. */
static int split_free(struct tfs_pool_chunk *c, uint64_t off)
{
	struct tfs_pool_chunk *r = malloc(sizeof(*r));

	if (!r)
		return -ENOMEM;
	idx_del(c);
	split_at(c, r, off);
	idx_add(c);
	idx_add(r);
	return 0;
}

int tfs_pool_adopt(struct tfs_pool *p, struct tfs_pool_key key, uint64_t base, uint64_t size,
		   void *cookie, uint64_t off, uint64_t bytes, struct tfs_pool_chunk **out)
{
	uint64_t need = round_up(bytes, p->cfg.align);
	struct tfs_pool_chunk *c, *spare = NULL, *head = NULL;
	struct arena *ar;
	struct block *b;
	int rc = -EINVAL, cls, added = 0;

	if (!bytes || bytes > POOL_MAX_REQUEST || !size || size % p->cfg.align ||
	    off % p->cfg.align || off > size || need > size - off)
		return -EINVAL;
	/* The first tensor adopted into a block tells its class where sizes collide: a large
	 * tensor's block, rounded to 2 MiB, may have a medium block's size. */
	cls = size == p->cfg.small_block ? CLS_SMALL :
	      medium_size(p, size) && bytes <= p->cfg.medium_max ? CLS_MEDIUM : CLS_LARGE;
	pthread_mutex_lock(&p->mu);
	b = block_at(p, base);
	if (b && (b->size != size || b->cookie != cookie || !key_eq(b->arena->key, key)))
		goto out;
	if (b)
		cls = b->cls;           /* the indexes reserved below are its class's */
	ar = b ? b->arena : arena_get(p, key);
	rc = -ENOMEM;
	if (!ar)
		goto out;
	spare = malloc(sizeof(*spare));
	if (!spare || idx_reserve(&ar->idx[cls], ar->idx[cls].need + 3) ||
	    (cls == CLS_LARGE && idx_reserve(&ar->idx[IDX_WHOLE], ar->idx[IDX_WHOLE].need + 1)))
		goto out;
	if (!b) {
		if ((rc = block_insert(p, ar, cls, size, base, cookie, &b)))
			goto out;
		added = 1;
	}
	/* The free chunk that holds [off, off + need): anything else is a record that
	 * overlaps another. */
	for (c = b->first; c && c->off + c->size <= off; c = c->next)
		;
	rc = -EINVAL;
	if (!c || !c->free || off + need > c->off + c->size)
		goto fail_block;
	if (c->off < off) {
		if ((rc = split_free(c, off)))
			goto fail_block;
		head = c;
		c = c->next;
	}
	/* A large block with nothing live has its free space indexed whole; once c is
	 * carved, the free head in front of it belongs with the block's other pieces. */
	if (head && b->cls == CLS_LARGE && !b->nlive)
		idx_del(head);
	else
		head = NULL;
	carve(p, c, need, bytes, &spare);
	if (head)
		idx_add(head);
	*out = c;
	rc = 0;
	goto out;
fail_block:
	if (added) {
		/* Not the pool's: the caller keeps the memory. */
		need_block(b, -1);
		idx_del(b->first);
		arena_unlink(b);
		p->st.reserved -= b->size;
		p->st.nblocks--;
		free(b->first);
		free(b);
	}
out:
	pthread_mutex_unlock(&p->mu);
	free(spare);
	return rc;
}

void tfs_pool_adopt_end(struct tfs_pool *p, void (*zero)(void *ctx, uint64_t addr, uint64_t len),
			void *ctx)
{
	pthread_mutex_lock(&p->mu);
	for (struct arena *ar = p->arenas; ar; ar = ar->next)
		for (struct block *b = ar->blocks; b; b = b->next)
			for (struct tfs_pool_chunk *c = b->first; c; c = c->next)
				if (c->free)
					zero(ctx, b->base + c->off, c->size);
	pthread_mutex_unlock(&p->mu);
}

uint64_t tfs_pool_growth_room(uint64_t old_bytes, uint64_t new_bytes)
{
	uint64_t r = old_bytes + old_bytes / 4;

	return r > new_bytes ? r : new_bytes;
}

/* tfs_pool_resize, or with moved NULL tfs_pool_grow: in place or -ENOSPC. */
static int resize(struct tfs_pool *p, struct tfs_pool_chunk *c, uint64_t new_bytes,
		  struct tfs_pool_chunk **moved)
{
	struct block *b = c->blk;
	struct tfs_pool_chunk *n;
	uint64_t need, room;
	int rc = 0;

	if (moved)
		*moved = NULL;
	if (!new_bytes)
		return -EINVAL;
	if (new_bytes > POOL_MAX_REQUEST)
		return -ENOSPC;
	need = round_up(new_bytes, p->cfg.align);
	pthread_mutex_lock(&p->mu);
	n = c->next;
	if (need <= c->size) {
		uint64_t tail = c->size - need;

		/* Give a shrunk tail back, into the free neighbour or as a chunk of its own.
		 * When the bookkeeping for that cannot be allocated, keeping the tail as spare
		 * capacity is harmless. */
		if (tail && n && n->free) {
			idx_del(n);
			n->off -= tail;
			n->size += tail;
			idx_add(n);
			c->size = need;
		} else if (tail && (b->retired || !idx_reserve(&b->arena->idx[b->cls],
							      b->arena->idx[b->cls].need + 1))) {
			struct tfs_pool_chunk *r = calloc(1, sizeof(*r));

			if (r) {
				r->blk = b;
				r->off = c->off + need;
				r->size = tail;
				r->free = 1;
				r->prev = c;
				r->next = n;
				if (n)
					n->prev = r;
				c->next = r;
				c->size = need;
				b->nchunks++;
				need_adjust(b, 1);
				idx_add(r);
			}
		}
		goto done;
	}
	if (n && n->free && c->size + n->size >= need) {
		uint64_t take = need - c->size;

		idx_del(n);
		if (n->size == take) {
			c->next = n->next;
			if (n->next)
				n->next->prev = c;
			free(n);
			b->nchunks--;
			need_adjust(b, -1);
		} else {
			n->off += take;
			n->size -= take;
			idx_add(n);
		}
		c->size = need;
		goto done;
	}
	if (!moved) {
		pthread_mutex_unlock(&p->mu);
		return -ENOSPC;
	}
	room = tfs_pool_growth_room(c->bytes, new_bytes);
	rc = alloc_locked(p, b->arena, new_bytes, room, moved);
	if (rc == -ENOSPC && room > new_bytes)
		rc = alloc_locked(p, b->arena, new_bytes, new_bytes, moved);
	pthread_mutex_unlock(&p->mu);
	return rc;
done:
	p->st.used += new_bytes;
	p->st.used -= c->bytes;
	c->bytes = new_bytes;
	pthread_mutex_unlock(&p->mu);
	return 0;
}

int tfs_pool_resize(struct tfs_pool *p, struct tfs_pool_chunk *c, uint64_t new_bytes,
		    struct tfs_pool_chunk **moved)
{
	return resize(p, c, new_bytes, moved);
}

int tfs_pool_grow(struct tfs_pool *p, struct tfs_pool_chunk *c, uint64_t new_bytes)
{
	return resize(p, c, new_bytes, NULL);
}

int tfs_pool_rekey(struct tfs_pool *p, struct tfs_pool_chunk *c, struct tfs_pool_key key)
{
	struct block *b = c->blk;
	struct tfs_pool_chunk *x;
	struct arena *dst;
	int rc = 0;

	pthread_mutex_lock(&p->mu);
	if (key_eq(b->arena->key, key))
		goto out;
	rc = -EBUSY;
	if (b->nlive != 1)
		goto out;
	rc = -ENOMEM;
	dst = arena_get(p, key);
	if (!dst)
		goto out;
	if (!b->retired) {
		for (x = b->first; x; x = x->next)
			if (x->free)
				idx_del(x);
		need_block(b, -1);
		held_adjust(b, -1);
		b->retired = 1;
	}
	arena_unlink(b);
	arena_link(dst, b);
	rc = 0;
out:
	pthread_mutex_unlock(&p->mu);
	return rc;
}

void tfs_pool_trim(struct tfs_pool *p)
{
	pthread_mutex_lock(&p->mu);
	trim_locked(p);
	pthread_mutex_unlock(&p->mu);
}

void tfs_pool_get_stats(struct tfs_pool *p, struct tfs_pool_stats *st)
{
	pthread_mutex_lock(&p->mu);
	*st = p->st;
	pthread_mutex_unlock(&p->mu);
}
