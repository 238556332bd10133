/* The pool's structures (pool.c), shared with its consistency check (pool_check.c);
 * private to the two. Everything here is read or changed under the pool's mu. */
#ifndef TFS_POOL_INTERNAL_H
#define TFS_POOL_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "mem/pool.h"

#define MiB (1024ull * 1024)
/* Requests above this fail at once: keeps every rounding below free of overflow. */
#define POOL_MAX_REQUEST (1ull << 60)
/* near_fit of a pool whose classes share every free chunk: far above any request, still
 * free of overflow when added to one. */
#define POOL_NEAR_ANY (1ull << 61)

/* Block classes, and the free indexes: one per class plus IDX_WHOLE for large blocks with
 * nothing live, kept apart so that a cached big block is not spent on a much smaller
 * request. */
enum { CLS_SMALL, CLS_MEDIUM, CLS_LARGE, NCLS, IDX_WHOLE = NCLS, NIDX };

struct block;
struct arena;

struct tfs_pool_chunk {
	struct block *blk;
	struct tfs_pool_chunk *prev, *next;     /* address order inside the block */
	uint64_t off, size;                     /* size: capacity, a multiple of align */
	uint64_t bytes;                         /* requested; 0 while free */
	int free;
};

struct block {
	struct arena *arena;
	struct block *prev, *next;              /* the arena's blocks */
	struct block *lru_prev, *lru_next;      /* the pool's cache, while nothing is live */
	struct tfs_pool_chunk *first;
	uint64_t base, size, seq;
	void *cookie;
	int cls;
	int retired;                            /* rekeyed: takes no new allocation */
	int cached;
	unsigned nchunks, nlive;
};

/* Free chunks of one class of blocks, sorted by (size, block seq, offset): best fit is the
 * first entry at or above the request. A sorted array beats a tree here: it holds a few
 * thousand entries at most and a memmove of those costs microseconds. */
struct fent {
	uint64_t size, seq, off;
	struct tfs_pool_chunk *c;
};

struct findex {
	struct fent *v;
	size_t n, cap;
	size_t need;        /* chunks that may come to be indexed here (those of unretired
			     * blocks of the class; for IDX_WHOLE one per unretired large
			     * block): cap >= need always, so that freeing never allocates */
};

struct arena {
	struct arena *next;
	struct tfs_pool_key key;
	struct block *blocks;
	uint64_t medium_held;                   /* bytes of its blocks of CLS_MEDIUM */
	struct findex idx[NIDX];
};

struct tfs_pool {
	pthread_mutex_t mu;
	struct tfs_pool_config cfg;
	struct tfs_pool_block_ops ops;
	void *ctx;
	struct arena *arenas;
	struct block *lru_head, *lru_tail;      /* head: cached longest */
	uint64_t seq;
	struct tfs_pool_stats st;
};

static inline int key_eq(struct tfs_pool_key x, struct tfs_pool_key y)
{
	return x.a == y.a && x.b == y.b && x.c == y.c;
}

static inline int fent_cmp(uint64_t size, uint64_t seq, uint64_t off, const struct fent *e)
{
	if (size != e->size)
		return size < e->size ? -1 : 1;
	if (seq != e->seq)
		return seq < e->seq ? -1 : 1;
	if (off != e->off)
		return off < e->off ? -1 : 1;
	return 0;
}

/* First position whose entry is >= (size, seq, off). */
static inline size_t idx_lower(const struct findex *ix, uint64_t size, uint64_t seq,
			       uint64_t off)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (fent_cmp(size, seq, off, &ix->v[mid]) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Where a free chunk is indexed; depends on b->nlive, so callers index and unindex with
 * the nlive the chunk was indexed under. */
static inline struct findex *chunk_index(const struct tfs_pool_chunk *c)
{
	const struct block *b = c->blk;

	return &b->arena->idx[b->cls == CLS_LARGE && !b->nlive ? IDX_WHOLE : b->cls];
}

#endif
