/* Unit test of the host tiers' preallocated pool (fs/mem/host_pool.c) over segments of
 * malloc'ed memory: the reserve made up front, given to the first key that needs a segment
 * and never to a second; tensors of one key sharing a segment; what a tensor leaves zeroed
 * for the next; the tier's cap (make's ENOSPC) spending idle segments before it refuses a
 * large tensor; destroy letting go of every segment without giving it back. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../fs/mem/pool.c"
#include "../../fs/mem/pool_check.c"
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

int main(void)
{
	struct tier t = { .cap = 4 * SEG };
	struct tfs_pool_key k1 = tfs_host_pool_key(1000, 1000, 0644, 7);
	struct tfs_pool_key k2 = tfs_host_pool_key(1000, 1000, 0600, 7);
	struct tfs_pool_chunk *a, *b, *c, *big, *more[8];
	struct tfs_host_pool *p;
	uint64_t held, live;
	void *sa, *sb, *sc, *sbig;
	int first, rc, n;

	ok(tfs_host_pool_seg_size(64ull << 30, PAGE) == 1ull << 30, "64 GiB: 1 GiB segments");
	ok(tfs_host_pool_seg_size(8ull << 20, PAGE) == SEG, "8 MiB: 2 MiB segments (the least)");
	ok(tfs_host_pool_seg_size(1ull << 30, PAGE) == 128ull << 20, "1 GiB: an eighth");
	ok(tfs_host_pool_new(SEG + 1, PAGE, &ops, &t) == NULL, "a segment of part of a page: refused");
	p = tfs_host_pool_new(SEG, PAGE, &ops, &t);
	ok(p != NULL, "a pool of 2 MiB segments");
	ok(tfs_host_pool_reserve(p, 4 * SEG) == 0 && t.made == 4, "the reserve: 4 segments made");
	tfs_host_pool_stats(p, &held, &live);
	ok(held == 4 * SEG && live == 0, "held 8 MiB, nothing live");

	rc = tfs_host_pool_alloc(p, k1, 100000, 0, 1, &a, &sa, &first);
	ok(rc == 0 && first && t.made == 4, "a first tensor takes a reserve segment (given to its key)");
	memset((void *)(uintptr_t)tfs_pool_chunk_addr(a), 0xab, 100000);
	rc = tfs_host_pool_alloc(p, k1, 200000, 0, 1, &b, &sb, &first);
	ok(rc == 0 && !first && sb == sa, "a second of its key shares the segment");
	ok(tfs_pool_chunk_offset(b) % PAGE == 0 && tfs_pool_chunk_offset(b) != tfs_pool_chunk_offset(a),
	   "at another page-aligned offset");
	rc = tfs_host_pool_alloc(p, k2, 4096, 0, 1, &c, &sc, &first);
	ok(rc == 0 && first && sc != sa, "another key: a segment of its own");
	tfs_host_pool_free(p, a);
	rc = tfs_host_pool_alloc(p, k1, 100000, 0, 1, &a, &sa, &first);
	n = 0;
	for (size_t i = 0; rc == 0 && i < 100000; i++)
		n += ((uint8_t *)(uintptr_t)tfs_pool_chunk_addr(a))[i] != 0;
	ok(rc == 0 && n == 0, "what a freed tensor left is zeroed for the next");
	tfs_host_pool_free(p, a);
	tfs_host_pool_free(p, b);
	tfs_host_pool_free(p, c);
	tfs_host_pool_stats(p, &held, &live);
	ok(held == 4 * SEG && live == 0 && t.dropped == 0,
	   "empty segments stay with their keys (no segment given back)");

	/* 2 segments idle, 2 given (to k1 and k2), 8 MiB cap: a 7 MiB tensor needs the idle
	 * ones and the empty given ones given back. */
	rc = tfs_host_pool_alloc(p, k1, 7ull << 20, 0, 0, &big, &sbig, &first);
	ok(rc == 0 && first, "a tensor larger than a segment: an object of its own");
	ok(t.dropped == 4, "made room by giving back the idle and the empty segments (%d)", t.dropped);
	tfs_host_pool_stats(p, &held, &live);
	ok(held == 7ull << 20 && live == 7ull << 20, "held and live: 7 MiB");
	rc = tfs_host_pool_alloc(p, k2, SEG, 0, 1, &c, &sc, &first);
	ok(rc == -ENOSPC, "past the cap: ENOSPC");
	tfs_host_pool_free(p, big);
	n = 0;
	while (n < 8 && tfs_host_pool_alloc(p, k2, SEG, 0, 1, &more[n], &sc, &first) == 0)
		n++;
	ok(n == 4, "once it goes, 4 segments of the other key fit the cap (%d)", n);
	{
		char msg[200];

		ok(tfs_pool_check(p->pool, msg, sizeof(msg)) == 0, "the pool is consistent");
	}
	t.dropped = 0;
	tfs_host_pool_destroy(p);
	ok(t.left == 4 && t.dropped == 0, "destroy lets go of every segment, gives none back");
	printf("# %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
