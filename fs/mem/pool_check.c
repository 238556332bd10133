/* The pool's consistency check (pool.h: tfs_pool_check) and what a chunk tells its
 * holder. */
#include <errno.h>
#include <stdio.h>

#include "mem/pool.h"
#include "mem/pool_internal.h"

#define CHECK(cond, ...) do { if (!(cond)) { snprintf(buf, buflen, __VA_ARGS__); \
	rc = -EFAULT; goto out; } } while (0)

int tfs_pool_check(struct tfs_pool *p, char *buf, unsigned buflen)
{
	struct tfs_pool_stats st = { 0 };
	struct arena *ar;
	struct block *b;
	uint64_t lru_bytes = 0;
	int rc = 0, k;

	pthread_mutex_lock(&p->mu);
	for (b = p->lru_head; b; b = b->lru_next) {
		CHECK(b->cached && !b->nlive && !b->retired, "block %llu in cache but live",
		      (unsigned long long)b->seq);
		CHECK(b->lru_next || p->lru_tail == b, "cache list tail");
		lru_bytes += b->size;
	}
	for (ar = p->arenas; ar; ar = ar->next) {
		size_t nfree[NIDX] = { 0 }, nall[NIDX] = { 0 };
		uint64_t medium = 0;

		for (b = ar->blocks; b; b = b->next)
			if (b->cls == CLS_MEDIUM && !b->retired)
				medium += b->size;
		CHECK(medium == ar->medium_held, "medium_held %llu, its medium blocks %llu",
		      (unsigned long long)ar->medium_held, (unsigned long long)medium);
		for (b = ar->blocks; b; b = b->next) {
			struct tfs_pool_chunk *c, *pv = NULL;
			uint64_t off = 0;
			unsigned nch = 0, nlive = 0;

			CHECK(b->arena == ar, "block %llu in the wrong arena", (unsigned long long)b->seq);
			CHECK(b->base && b->base % p->cfg.align == 0, "block base unaligned");
			for (c = b->first; c; pv = c, c = c->next) {
				CHECK(c->blk == b && c->prev == pv, "chunk links of block %llu",
				      (unsigned long long)b->seq);
				CHECK(c->off == off && c->size && c->size % p->cfg.align == 0,
				      "chunk at %llu of block %llu does not tile (off %llu size %llu)",
				      (unsigned long long)off, (unsigned long long)b->seq,
				      (unsigned long long)c->off, (unsigned long long)c->size);
				off += c->size;
				nch++;
				if (c->free) {
					const struct findex *ix = chunk_index(c);
					size_t i;

					CHECK(!pv || !pv->free, "adjacent free chunks");
					CHECK(!c->bytes, "free chunk with bytes");
					if (!b->retired) {
						i = idx_lower(ix, c->size, b->seq, c->off);
						CHECK(i < ix->n && ix->v[i].c == c,
						      "free chunk missing from the index");
						nfree[ix - ar->idx]++;
					}
				} else {
					CHECK(c->bytes && c->bytes <= c->size, "live chunk size");
					nlive++;
					st.used += c->bytes;
				}
			}
			CHECK(off == b->size, "chunks cover %llu of %llu bytes",
			      (unsigned long long)off, (unsigned long long)b->size);
			CHECK(nch == b->nchunks && nlive == b->nlive, "block counters");
			CHECK(b->cached == (!nlive && !b->retired), "cached flag of block %llu",
			      (unsigned long long)b->seq);
			if (!b->retired) {
				nall[b->cls] += nch;
				nall[IDX_WHOLE] += b->cls == CLS_LARGE;
			}
			st.nallocs += nlive;
			st.reserved += b->size;
			st.nblocks++;
		}
		for (k = 0; k < NIDX; k++) {
			const struct findex *ix = &ar->idx[k];
			size_t i;

			CHECK(ix->n == nfree[k], "index %d holds %zu entries, %zu free chunks", k,
			      ix->n, nfree[k]);
			CHECK(ix->need == nall[k] && ix->cap >= ix->need, "index %d reserve", k);
			for (i = 0; i + 1 < ix->n; i++)
				CHECK(fent_cmp(ix->v[i].size, ix->v[i].seq, ix->v[i].off,
					       &ix->v[i + 1]) < 0, "index %d unsorted", k);
			for (i = 0; i < ix->n; i++)
				CHECK(ix->v[i].size == ix->v[i].c->size && ix->v[i].c->free &&
				      key_eq(ix->v[i].c->blk->arena->key, ar->key),
				      "index %d entry %zu stale", k, i);
		}
	}
	CHECK(st.used == p->st.used && st.reserved == p->st.reserved &&
	      st.nallocs == p->st.nallocs && st.nblocks == p->st.nblocks &&
	      lru_bytes == p->st.cached, "pool counters");
out:
	pthread_mutex_unlock(&p->mu);
	return rc;
}

uint64_t tfs_pool_chunk_addr(const struct tfs_pool_chunk *c)
{
	return c->blk->base + c->off;
}

uint64_t tfs_pool_chunk_offset(const struct tfs_pool_chunk *c)
{
	return c->off;
}

uint64_t tfs_pool_chunk_bytes(const struct tfs_pool_chunk *c)
{
	return c->bytes;
}

uint64_t tfs_pool_chunk_capacity(const struct tfs_pool_chunk *c)
{
	return c->size;
}

uint64_t tfs_pool_chunk_block_base(const struct tfs_pool_chunk *c)
{
	return c->blk->base;
}

uint64_t tfs_pool_chunk_block_size(const struct tfs_pool_chunk *c)
{
	return c->blk->size;
}

void *tfs_pool_chunk_cookie(const struct tfs_pool_chunk *c)
{
	return c->blk->cookie;
}

struct tfs_pool_key tfs_pool_chunk_key(const struct tfs_pool_chunk *c)
{
	struct tfs_pool_key k;

	/* The arena pointer is only changed under the lock (rekey); the owner of c is the one
	 * who calls rekey, so an unlocked read by the owner is consistent. */
	k = c->blk->arena->key;
	return k;
}
