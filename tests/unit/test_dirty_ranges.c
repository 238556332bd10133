/* Unit test of a segment's dirty ranges (fs/mem/dirty_ranges.c) on their own: merging on
 * insert, the bound (the closest neighbours merged, never a byte lost), take's pieces
 * and what it leaves, the split it skips at the bound; then random adds and takes against
 * a byte map of what is really dirty: every dirty byte is always in the set, the set is
 * exact while it stays under the bound, and take reports exactly the set's bytes in its
 * range. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../fs/mem/dirty_ranges.c"

#include "tap.h"

#define U 4096u

/* Sorted, disjoint, not touching, within the bound. */
static int well_formed(const struct tfs_dirty *d)
{
	if (d->n > TFS_DIRTY_MAX)
		return 0;
	for (unsigned i = 0; i < d->n; i++) {
		if (d->r[i].start >= d->r[i].end)
			return 0;
		if (i && d->r[i - 1].end >= d->r[i].start)
			return 0;
	}
	return 1;
}

static void to_map(const struct tfs_dirty *d, unsigned char *m)
{
	memset(m, 0, U);
	for (unsigned i = 0; i < d->n; i++)
		for (uint64_t o = d->r[i].start; o < d->r[i].end && o < U; o++)
			m[o] = 1;
}

static int same(const struct tfs_dirty *d, const struct tfs_dirty_range *want, unsigned n)
{
	if (d->n != n)
		return 0;
	for (unsigned i = 0; i < n; i++)
		if (d->r[i].start != want[i].start || d->r[i].end != want[i].end)
			return 0;
	return 1;
}

static void test_merge(void)
{
	struct tfs_dirty d;

	tfs_dirty_init(&d);
	ok(d.n == 0 && tfs_dirty_bytes(&d, 0, U) == 0, "fresh: nothing dirty");
	tfs_dirty_add(&d, 10, 10);
	ok(d.n == 0, "an empty range is ignored");
	tfs_dirty_add(&d, 100, 200);
	tfs_dirty_add(&d, 300, 400);
	tfs_dirty_add(&d, 0, 50);
	ok(same(&d, (struct tfs_dirty_range[]){ { 0, 50 }, { 100, 200 }, { 300, 400 } }, 3),
	   "disjoint ranges kept apart, in order");
	tfs_dirty_add(&d, 200, 250);
	ok(same(&d, (struct tfs_dirty_range[]){ { 0, 50 }, { 100, 250 }, { 300, 400 } }, 3),
	   "a range touching another's end joins it");
	tfs_dirty_add(&d, 40, 310);
	ok(same(&d, (struct tfs_dirty_range[]){ { 0, 400 } }, 1),
	   "a range over three becomes one with them");
	tfs_dirty_add(&d, 100, 120);
	ok(same(&d, (struct tfs_dirty_range[]){ { 0, 400 } }, 1), "one inside changes nothing");
	tfs_dirty_init_all(&d, 1000);
	ok(same(&d, (struct tfs_dirty_range[]){ { 0, 1000 } }, 1), "init_all: all of it dirty");
	ok(tfs_dirty_bytes(&d, 900, 2000) == 100, "bytes: clipped to the range");
}

static void test_take(void)
{
	struct tfs_dirty_range out[TFS_DIRTY_MAX];
	struct tfs_dirty d;
	unsigned n;

	tfs_dirty_init(&d);
	tfs_dirty_add(&d, 100, 200);
	tfs_dirty_add(&d, 300, 400);
	tfs_dirty_add(&d, 500, 600);
	n = tfs_dirty_take(&d, 150, 550, out);
	ok(n == 3 && out[0].start == 150 && out[0].end == 200 && out[1].start == 300 &&
	   out[1].end == 400 && out[2].start == 500 && out[2].end == 550,
	   "take: the dirty pieces of its range, clipped, in order");
	ok(same(&d, (struct tfs_dirty_range[]){ { 100, 150 }, { 550, 600 } }, 2),
	   "and leaves what lies outside it");
	n = tfs_dirty_take(&d, 150, 550, out);
	ok(n == 0, "a range taken has nothing left to report");
	n = tfs_dirty_take(&d, 110, 120, NULL);
	ok(n == 1 && same(&d, (struct tfs_dirty_range[]){ { 100, 110 }, { 120, 150 },
							 { 550, 600 } }, 3),
	   "the middle of a range: split in two");
	ok(tfs_dirty_take(&d, 5, 5, out) == 0, "an empty range: nothing");

	/* At the bound, a split would need one more slot: the range stays whole. */
	tfs_dirty_init(&d);
	for (unsigned i = 0; i < TFS_DIRTY_MAX; i++)
		tfs_dirty_add(&d, 100 * i, 100 * i + 50);
	ok(d.n == TFS_DIRTY_MAX, "%d ranges: at the bound", TFS_DIRTY_MAX);
	n = tfs_dirty_take(&d, 110, 120, out);
	ok(n == 1 && out[0].start == 110 && out[0].end == 120, "a split at the bound is "
	   "still reported dirty");
	ok(d.n == TFS_DIRTY_MAX && d.r[1].start == 100 && d.r[1].end == 150,
	   "and the range stays whole in the set (dirty, never wrong)");
}

static void test_bound(void)
{
	struct tfs_dirty d;
	unsigned char m[U];
	int covered = 1;

	tfs_dirty_init(&d);
	/* Every other 8 bytes: 256 ranges asked for. */
	for (unsigned o = 0; o < U; o += 16)
		tfs_dirty_add(&d, o, o + 8);
	to_map(&d, m);
	for (unsigned o = 0; o < U; o += 16)
		for (unsigned k = 0; k < 8; k++)
			covered &= m[o + k];
	ok(well_formed(&d) && d.n <= TFS_DIRTY_MAX, "256 ranges added: at most %d kept (%u)",
	   TFS_DIRTY_MAX, d.n);
	ok(covered, "every byte added is still dirty");
	/* The gaps merged first are the smallest. */
	tfs_dirty_init(&d);
	for (unsigned i = 0; i < TFS_DIRTY_MAX; i++)
		tfs_dirty_add(&d, 1000 * i, 1000 * i + 10);
	tfs_dirty_add(&d, 1000 * 5 + 12, 1000 * 5 + 20);
	ok(d.n == TFS_DIRTY_MAX && d.r[5].start == 5000 && d.r[5].end == 5020,
	   "one over the bound: the two with the smallest gap (2 bytes) merge");
}

static uint64_t rnd(uint64_t n)
{
	return (uint64_t)random() % n;
}

static void test_random(void)
{
	unsigned char truth[U], set[U], before[U], rep[U];
	struct tfs_dirty_range out[TFS_DIRTY_MAX];
	int sound = 1, exact = 1, formed = 1, reported = 1, exact_checks = 0;
	struct tfs_dirty d;

	srandom(35);
	for (int round = 0; round < 200; round++) {
		/* Even rounds: ranges of up to 32 bytes in 256 stay under the bound; odd ones:
		 * up to 16 bytes anywhere in U go over it. */
		unsigned span = round % 2 ? U : 256, len = round % 2 ? 16 : 32;

		int lossy = 0;          /* the bound was reached: over-approximates since */

		tfs_dirty_init(&d);
		memset(truth, 0, sizeof(truth));
		for (int op = 0; op < 300; op++) {
			uint64_t s = rnd(span), e = s + 1 + rnd(len), n;

			lossy |= d.n == TFS_DIRTY_MAX;

			if (e > U)
				e = U;
			if (rnd(2)) {
				tfs_dirty_add(&d, s, e);
				memset(truth + s, 1, e - s);
			} else {
				to_map(&d, before);
				n = tfs_dirty_take(&d, s, e, out);
				memset(rep, 0, sizeof(rep));
				for (unsigned i = 0; i < n; i++) {
					if (out[i].start < s || out[i].end > e ||
					    out[i].start >= out[i].end ||
					    (i && out[i - 1].end > out[i].start))
						reported = 0;
					memset(rep + out[i].start, 1, out[i].end - out[i].start);
				}
				for (uint64_t o = 0; o < U; o++)
					if (rep[o] != (o >= s && o < e && before[o]))
						reported = 0;
				memset(truth + s, 0, e - s);    /* the owner zeroed it */
			}
			formed &= well_formed(&d);
			to_map(&d, set);
			for (unsigned o = 0; o < U; o++)
				sound &= !truth[o] || set[o];
			if (!lossy) {
				exact_checks++;
				exact &= memcmp(truth, set, U) == 0;
			}
		}
	}
	ok(formed, "random adds and takes: the set stays sorted, disjoint, within the bound");
	ok(sound, "every byte really dirty is in the set");
	ok(reported, "take reports exactly the set's bytes in its range");
	ok(exact && exact_checks > 1000 && exact_checks < 60000, "under the bound, the set is exactly what is dirty "
	   "(%d checks)", exact_checks);
}

int main(void)
{
	test_merge();
	test_take();
	test_bound();
	test_random();
	printf("# %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
