/* Unit test of the host tiers' preallocated pool (fs/mem/host_pool.c) over segments of
 * malloc'ed memory: the reserve's layout (pool.c tfs_pool_prealloc_piece: single segments
 * and runs), made up front, each piece given to the first key that needs it and never to a
 * second; tensors of one key sharing a segment; a tensor of three segments served by a run
 * of the reserve, freed back to it and reused; what a tensor leaves zeroed for the next;
 * with no idle run, the tier's cap (make's ENOSPC) spending idle segments and empty ones
 * before it refuses a large tensor; adoption and the return of runs; destroy letting go of
 * every piece without giving it back. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../fs/mem/pool.c"
#include "../../fs/mem/pool_check.c"
#include "../../fs/mem/dirty_ranges.c"
#include "../../fs/mem/host_pool.c"

#include "tap.h"

#define PAGE 4096ull
#define SEG (2ull << 20)

/* A tier of cap bytes: segments are malloc'ed, counted while out. */
struct tier {
	uint64_t cap, out;
	int made, dropped, left;
};

static int make(void *ctx, uint64_t size, void **seg, void **base)
{
	struct tier *t = ctx;
	void *p;

	if (t->out + size > t->cap)
		return -ENOSPC;
	if (posix_memalign(&p, PAGE, size))
		return -ENOMEM;
	memset(p, 0, size);
	t->out += size;
	t->made++;
	*seg = p;
	*base = p;
	return 0;
}

static void drop(void *ctx, void *seg, uint64_t size)
{
	struct tier *t = ctx;

	t->out -= size;
	t->dropped++;
	free(seg);
}

static void leave(void *ctx, void *seg)
{
	struct tier *t = ctx;

	t->left++;
	free(seg);
}

static const struct tfs_host_seg_ops ops = { make, drop, leave };

static int zeroed(const struct tfs_pool_chunk *c, uint64_t len)
{
	const uint8_t *b = (const uint8_t *)(uintptr_t)tfs_pool_chunk_addr(c);

	for (uint64_t i = 0; i < len; i++)
		if (b[i])
			return 0;
	return 1;
}

static void fill(const struct tfs_pool_chunk *c, int v)
{
	memset((void *)(uintptr_t)tfs_pool_chunk_addr(c), v, tfs_pool_chunk_capacity(c));
}

/* Bytes the chunk's segment counts dirty (host_pool.c's dirty ranges). */
static uint64_t seg_dirty(const struct tfs_pool_chunk *c)
{
	const struct hseg *h = tfs_pool_chunk_cookie(c);

	return tfs_dirty_bytes(&h->dirty, 0, h->size);
}

/* Which bytes are zeroed at a create: only what a freed tensor (or an earlier run) left,
 * every one of them, through partial reuse, grow, zero 0 (a move), adoption and the
 * reserve's found pieces; the record bounded under churn. */
static void test_dirty(void)
{
	struct tier t = { .cap = 8 * SEG };
	struct tfs_pool_key k1 = tfs_host_pool_key(1000, 1000, 0644, 7);
	struct tfs_pool_chunk *a, *b, *c, *d, *e, *many[64];
	struct tfs_host_pool *p = tfs_host_pool_new(SEG, PAGE, &ops, &t);
	uint64_t ca, cc, cd;
	void *s, *run, *found;
	int first, rc, good;
	char msg[200] = "";

	tfs_host_pool_reserve(p, 8 * SEG);
	rc = tfs_host_pool_alloc(p, k1, 100000, 0, 1, &a, &s, &first);
	ok(rc == 0 && seg_dirty(a) == 0 && zeroed(a, tfs_pool_chunk_capacity(a)),
	   "dirty: a create from fresh memory: nothing counted dirty, its bytes zero");
	rc = tfs_host_pool_alloc(p, k1, 100000, 0, 1, &b, &s, &first);
	fill(a, 0xab);
	fill(b, 0xcd);
	ca = tfs_pool_chunk_capacity(a);
	tfs_host_pool_free(p, a);
	ok(seg_dirty(b) == ca, "a freed tensor's capacity counts dirty (%llu)",
	   (unsigned long long)seg_dirty(b));
	rc = tfs_host_pool_alloc(p, k1, 50000, 0, 1, &c, &s, &first);
	cc = tfs_pool_chunk_capacity(c);
	ok(rc == 0 && tfs_pool_chunk_offset(c) == 0 && zeroed(c, cc),
	   "a smaller one where it was: zeroed");
	ok(seg_dirty(b) == ca - cc, "the rest of the freed range stays dirty");
	tfs_host_pool_free(p, b);
	rc = tfs_host_pool_alloc(p, k1, 300000, 0, 1, &d, &s, &first);
	ok(rc == 0 && tfs_pool_chunk_offset(d) == cc && zeroed(d, tfs_pool_chunk_capacity(d)),
	   "a larger one over the rest of a, all of b and fresh memory: zeroed");
	ok(seg_dirty(d) == 0, "nothing dirty left outside the live tensors");

	/* grow: the free space it takes leaves the record (the backend zeroes it) */
	fill(c, 0x11);
	fill(d, 0x22);
	cd = tfs_pool_chunk_capacity(d);
	tfs_host_pool_free(p, d);
	ok(seg_dirty(c) == cd, "d freed: its capacity dirty");
	rc = tfs_host_pool_grow(p, c, cc + 200000);
	ok(rc == 0 && seg_dirty(c) == cd - (tfs_pool_chunk_capacity(c) - cc),
	   "grown in place: what it took of d's range is out of the record (%llu)",
	   (unsigned long long)seg_dirty(c));
	tfs_host_pool_free(p, c);

	/* zero 0 (a move writes every byte): nothing zeroed, the range still leaves the
	 * record, and comes back dirty at its free */
	rc = tfs_host_pool_alloc(p, k1, 100000, 0, 0, &e, &s, &first);
	good = rc == 0;
	for (uint64_t i = 0; good && i < tfs_pool_chunk_capacity(e); i++)
		good = ((uint8_t *)(uintptr_t)tfs_pool_chunk_addr(e))[i] != 0;
	ok(good, "zero 0: a move's chunk is not zeroed, not a byte (its caller writes it)");
	tfs_host_pool_free(p, e);
	rc = tfs_host_pool_alloc(p, k1, 100000, 0, 1, &e, &s, &first);
	ok(rc == 0 && zeroed(e, tfs_pool_chunk_capacity(e)), "and the next create there is zeroed");
	tfs_host_pool_free(p, e);

	/* churn: many holes, the record bounded */
	for (int i = 0; i < 64; i++)
		rc |= tfs_host_pool_alloc(p, k1, 4096, 0, 1, &many[i], &s, &first);
	for (int i = 0; i < 64; i++)
		fill(many[i], 0x33);
	for (int i = 0; i < 64; i += 2)
		tfs_host_pool_free(p, many[i]);
	ok(rc == 0 && ((struct hseg *)tfs_pool_chunk_cookie(many[1]))->dirty.n <= TFS_DIRTY_MAX,
	   "32 holes between live tensors: the record stays within its bound");
	good = 1;
	for (int i = 0; i < 64; i += 2) {
		good &= tfs_host_pool_alloc(p, k1, 4096, 0, 1, &many[i], &s, &first) == 0 &&
			zeroed(many[i], 4096);
	}
	ok(good, "every hole reused reads zeros");
	for (int i = 0; i < 64; i++)
		tfs_host_pool_free(p, many[i]);
	ok(tfs_pool_check(p->pool, msg, sizeof(msg)) == 0, "the pool is consistent (%s)", msg);
	tfs_host_pool_destroy(p);

	/* adoption: an earlier run's object, every free byte of it dirty; a found piece too */
	memset(&t, 0, sizeof(t));
	t.cap = 8 * SEG;
	p = tfs_host_pool_new(SEG, PAGE, &ops, &t);
	make(&t, 4 * SEG, &run, &s);
	make(&t, SEG, &found, &s);
	memset(run, 0xee, 4 * SEG);
	memset(found, 0xef, SEG);
	rc = tfs_host_pool_adopt(p, k1, run, run, 4 * SEG, SEG, SEG, &a);
	ok(rc == 0 && seg_dirty(a) == 3 * SEG, "adopted: all but the tensor counts dirty");
	rc = tfs_host_pool_adopt(p, k1, run, run, 4 * SEG, 3 * SEG, SEG / 2, &b);
	ok(rc == 0 && seg_dirty(a) == 3 * SEG - SEG / 2,
	   "a second tensor of the object: out of it too");
	rc = tfs_host_pool_alloc(p, k1, SEG / 2, 0, 1, &c, &s, &first);
	ok(rc == 0 && s == run && zeroed(c, tfs_pool_chunk_capacity(c)),
	   "a create in an adopted object's free space: zeroed");
	tfs_host_pool_give(p, found, found, SEG);
	rc = tfs_host_pool_alloc(p, tfs_host_pool_key(1001, 1000, 0644, 7), 4096, 0, 1, &d, &s,
				 &first);
	ok(rc == 0 && s == found && zeroed(d, 4096), "a create in a found piece: zeroed");
	tfs_host_pool_destroy(p);      /* leave frees both */
}

static void test_layout(void)
{
	uint64_t want8[] = { 4, 1, 1, 1, 1, 0 };
	int good = 1;

	for (int i = 0; i < 6; i++)
		good &= tfs_pool_prealloc_piece(8, (uint64_t)i) == want8[i];
	ok(good, "8 segments: a run of 4, then 4 single segments");
	ok(tfs_pool_prealloc_piece(2, 0) == 1 && tfs_pool_prealloc_piece(2, 1) == 1 &&
	   tfs_pool_prealloc_piece(2, 2) == 0, "2 segments: two singles, no run");
	ok(tfs_pool_prealloc_piece(5, 0) == 2 && tfs_pool_prealloc_piece(5, 1) == 1 &&
	   tfs_pool_prealloc_piece(5, 4) == 0, "5 segments: a run of 2 and 3 singles");
	ok(tfs_pool_prealloc_piece(0, 0) == 0, "nothing missing: nothing made");
	good = 1;
	for (uint64_t n = 1; n <= 300; n++) {
		uint64_t sum = 0, runs = 0, k, piece;

		for (k = 0; (piece = tfs_pool_prealloc_piece(n, k)); k++) {
			good &= piece <= TFS_POOL_RUN_MAX;
			sum += piece;
			runs += piece > 1 ? piece : 0;
		}
		good &= sum == n && runs <= n / 2 && runs + 1 >= n / 2 && k <= n;
	}
	ok(good, "1..300 segments: the pieces add up, half or so in runs of at most %d",
	   TFS_POOL_RUN_MAX);
	ok(tfs_pool_prealloc_piece(64, 7) == 4 && tfs_pool_prealloc_piece(64, 8) == 1 &&
	   tfs_pool_prealloc_piece(64, 39) == 1 && tfs_pool_prealloc_piece(64, 40) == 0,
	   "64 segments (64 GiB): 8 runs of 4 and 32 singles");
}

int main(void)
{
	struct tier t = { .cap = 8 * SEG };
	struct tfs_pool_key k1 = tfs_host_pool_key(1000, 1000, 0644, 7);
	struct tfs_pool_key k2 = tfs_host_pool_key(1000, 1000, 0600, 7);
	struct tfs_pool_key k3 = tfs_host_pool_key(1001, 1000, 0644, 7);
	struct tfs_pool_chunk *a, *b, *c, *big, *more[8];
	struct tfs_host_pool *p;
	uint64_t held, live;
	void *sa, *sb, *sc, *sbig, *s2;
	int first, rc, n;
	char msg[200];

	test_layout();
	test_dirty();
	ok(tfs_host_pool_seg_size(64ull << 30, PAGE) == 1ull << 30, "64 GiB: 1 GiB segments");
	ok(tfs_host_pool_seg_size(8ull << 20, PAGE) == SEG, "8 MiB: 2 MiB segments (the least)");
	ok(tfs_host_pool_seg_size(1ull << 30, PAGE) == 128ull << 20, "1 GiB: an eighth");
	ok(tfs_host_pool_new(SEG + 1, PAGE, &ops, &t) == NULL, "a segment of part of a page: refused");
	p = tfs_host_pool_new(SEG, PAGE, &ops, &t);
	ok(p != NULL, "a pool of 2 MiB segments");
	ok(tfs_host_pool_reserve(p, 8 * SEG) == 0 && t.made == 5,
	   "the reserve: a run of 4 segments and 4 singles made (%d)", t.made);
	tfs_host_pool_stats(p, &held, &live);
	ok(held == 8 * SEG && live == 0, "held 16 MiB, nothing live");

	rc = tfs_host_pool_alloc(p, k1, 100000, 0, 1, &a, &sa, &first);
	ok(rc == 0 && first && t.made == 5 && tfs_pool_chunk_block_size(a) == SEG,
	   "a first tensor takes a single segment of the reserve (given to its key)");
	memset((void *)(uintptr_t)tfs_pool_chunk_addr(a), 0xab, 100000);
	rc = tfs_host_pool_alloc(p, k1, 200000, 0, 1, &b, &sb, &first);
	ok(rc == 0 && !first && sb == sa, "a second of its key shares the segment");
	ok(tfs_pool_chunk_offset(b) % PAGE == 0 && tfs_pool_chunk_offset(b) != tfs_pool_chunk_offset(a),
	   "at another page-aligned offset");
	rc = tfs_host_pool_alloc(p, k2, 4096, 0, 1, &c, &sc, &first);
	ok(rc == 0 && first && sc != sa && tfs_pool_chunk_block_size(c) == SEG,
	   "another key: a single segment of its own");
	tfs_host_pool_free(p, a);
	rc = tfs_host_pool_alloc(p, k1, 100000, 0, 1, &a, &sa, &first);
	ok(rc == 0 && zeroed(a, 100000), "what a freed tensor left is zeroed for the next");
	tfs_host_pool_free(p, a);
	tfs_host_pool_free(p, b);
	tfs_host_pool_free(p, c);
	tfs_host_pool_stats(p, &held, &live);
	ok(held == 8 * SEG && live == 0 && t.dropped == 0,
	   "empty segments stay with their keys (no segment given back)");

	/* A tensor of three segments: the run. */
	rc = tfs_host_pool_alloc(p, k1, 3 * SEG - 4096, 0, 0, &big, &sbig, &first);
	ok(rc == 0 && first && t.made == 5 && sbig != sa && tfs_pool_chunk_block_size(big) == 4 * SEG &&
	   tfs_pool_chunk_offset(big) == 0,
	   "a tensor of three segments: the run of four, from the reserve, nothing made");
	tfs_host_pool_stats(p, &held, &live);
	ok(held == 8 * SEG && live == 3 * SEG - 4096, "held still 16 MiB, the tensor live");
	memset((void *)(uintptr_t)tfs_pool_chunk_addr(big), 0x5a, 3 * SEG - 4096);
	rc = tfs_host_pool_alloc(p, k1, SEG / 2, 0, 1, &b, &sb, &first);
	ok(rc == 0 && !first && t.made == 5, "a small one of its key beside it, nothing made");
	tfs_host_pool_free(p, b);
	tfs_host_pool_free(p, big);
	rc = tfs_host_pool_alloc(p, k1, 3 * SEG, 0, 1, &big, &s2, &first);
	ok(rc == 0 && !first && s2 == sbig && tfs_pool_chunk_offset(big) == 0 && t.made == 5,
	   "freed back to its key's run, and reused by the next of its size");
	ok(zeroed(big, 3 * SEG), "zeroed for it");
	ok(tfs_pool_check(p->pool, msg, sizeof(msg)) == 0, "the pool is consistent (%s)", msg);

	/* No idle run for another key: fresh memory, the idle singles and the empty ones given
	 * back first to make room under the cap; then, with nothing to give, ENOSPC. */
	rc = tfs_host_pool_alloc(p, k2, 3 * SEG, 0, 0, &c, &sc, &first);
	ok(rc == 0 && first && t.made == 6 && t.dropped == 4,
	   "no idle run for another key: an object of its own, idle and empty segments given "
	   "back (made %d, dropped %d)", t.made, t.dropped);
	tfs_host_pool_stats(p, &held, &live);
	ok(held == 7 * SEG && live == 6 * SEG && t.out <= t.cap, "held 14 MiB under the cap");
	rc = tfs_host_pool_alloc(p, k3, 3 * SEG, 0, 0, &a, &sa, &first);
	ok(rc == -ENOSPC, "a third key's: no run, no room: ENOSPC");
	tfs_host_pool_free(p, c);
	tfs_host_pool_free(p, big);
	ok(tfs_pool_check(p->pool, msg, sizeof(msg)) == 0, "the pool is consistent (%s)", msg);
	tfs_host_pool_destroy(p);
	ok(t.left == 2, "destroy lets go of the run and the object (%d)", t.left);

	/* A tensor larger than every run: fresh memory, room made by giving back the smallest
	 * idle pieces first, so the run stays for the next large tensor. */
	memset(&t, 0, sizeof(t));
	t.cap = 10 * SEG;
	p = tfs_host_pool_new(SEG, PAGE, &ops, &t);
	/* given in the order a restart may find them: the run last */
	for (n = 0; n < 5; n++) {
		void *piece;

		make(&t, n < 4 ? SEG : 4 * SEG, &piece, &sa);
		tfs_host_pool_give(p, piece, piece, n < 4 ? SEG : 4 * SEG);
	}
	t.made = 5;
	rc = tfs_host_pool_alloc(p, k1, 5 * SEG, 0, 0, &big, &sbig, &first);
	ok(rc == 0 && t.made == 6 && t.dropped == 3 && tfs_pool_chunk_block_size(big) == 5 * SEG,
	   "larger than the run: an object of its own, 3 single segments given back (%d)",
	   t.dropped);
	rc = tfs_host_pool_alloc(p, k2, 3 * SEG, 0, 0, &c, &sc, &first);
	ok(rc == 0 && t.made == 6 && tfs_pool_chunk_block_size(c) == 4 * SEG,
	   "the run stayed idle: the next large tensor takes it");
	tfs_host_pool_free(p, big);
	tfs_host_pool_free(p, c);
	tfs_host_pool_destroy(p);

	/* Adoption after a restart: a tensor in a run brings the run in whole; runs and
	 * segments join the reserve, nothing else. */
	memset(&t, 0, sizeof(t));
	t.cap = 8 * SEG;
	p = tfs_host_pool_new(SEG, PAGE, &ops, &t);
	{
		void *run, *one, *odd;

		make(&t, 4 * SEG, &run, &sa);
		make(&t, SEG, &one, &sa);
		make(&t, 3 * SEG, &odd, &sa);
		rc = tfs_host_pool_adopt(p, k1, run, run, 4 * SEG, SEG, 2 * SEG, &big);
		ok(rc == 0 && tfs_pool_chunk_block_size(big) == 4 * SEG &&
		   tfs_pool_chunk_offset(big) == SEG, "a tensor at an offset of a run: adopted");
		ok(tfs_host_pool_give(p, one, one, SEG) == 0, "a single segment joins the reserve");
		ok(tfs_host_pool_give(p, odd, odd, 3 * SEG + PAGE) == -EINVAL,
		   "a size no piece has: refused");
		ok(tfs_host_pool_give(p, odd, odd, 5 * SEG) == -EINVAL, "a run too long: refused");
		ok(tfs_host_pool_give(p, odd, odd, 3 * SEG) == 0, "a run of three joins it");
		tfs_host_pool_stats(p, &held, &live);
		ok(held == 8 * SEG && live == 2 * SEG, "held: the run and the two pieces");
		rc = tfs_host_pool_alloc(p, k1, SEG, 0, 1, &a, &sa, &first);
		ok(rc == 0 && !first && sa == run, "its key's next tensor goes into the run's rest");
		rc = tfs_host_pool_alloc(p, k2, 2 * SEG + 1, 0, 1, &c, &sc, &first);
		ok(rc == 0 && first && sc == odd, "a tensor of over two segments: the run of three");
		ok(tfs_pool_check(p->pool, msg, sizeof(msg)) == 0, "the pool is consistent (%s)", msg);
		n = 0;
		while (n < 8 && tfs_host_pool_alloc(p, k3, SEG, 0, 1, &more[n], &sb, &first) == 0)
			n++;
		ok(n == 1, "a third key: the single segment, then ENOSPC (%d)", n);
	}
	t.dropped = 0;
	tfs_host_pool_destroy(p);
	ok(t.left == 3 && t.dropped == 0, "destroy lets go of every piece, gives none back");
	printf("# %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
