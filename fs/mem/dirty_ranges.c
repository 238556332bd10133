/* The dirty ranges of a preallocated host segment (dirty_ranges.h). A few dozen ranges
 * at most: plain arrays and linear walks. */
#include <string.h>

#include "mem/dirty_ranges.h"

void tfs_dirty_init(struct tfs_dirty *d)
{
	d->n = 0;
}

void tfs_dirty_init_all(struct tfs_dirty *d, uint64_t size)
{
	d->n = 0;
	if (size)
		d->r[d->n++] = (struct tfs_dirty_range){ 0, size };
}

/* Over the bound by one: the two neighbours with the smallest gap become one range. */
static void coarsen(struct tfs_dirty *d)
{
	unsigned best = 0;

	for (unsigned i = 1; i + 1 < d->n; i++)
		if (d->r[i + 1].start - d->r[i].end < d->r[best + 1].start - d->r[best].end)
			best = i;
	d->r[best].end = d->r[best + 1].end;
	memmove(&d->r[best + 1], &d->r[best + 2], (d->n - best - 2) * sizeof(d->r[0]));
	d->n--;
}

void tfs_dirty_add(struct tfs_dirty *d, uint64_t start, uint64_t end)
{
	unsigned i = 0, j;

	if (start >= end)
		return;
	/* r[i..j) overlap or touch [start, end]: they and it become one range. */
	while (i < d->n && d->r[i].end < start)
		i++;
	for (j = i; j < d->n && d->r[j].start <= end; j++)
		;
	if (i < j) {
		if (d->r[i].start < start)
			start = d->r[i].start;
		if (d->r[j - 1].end > end)
			end = d->r[j - 1].end;
		d->r[i] = (struct tfs_dirty_range){ start, end };
		memmove(&d->r[i + 1], &d->r[j], (d->n - j) * sizeof(d->r[0]));
		d->n -= j - i - 1;
		return;
	}
	memmove(&d->r[i + 1], &d->r[i], (d->n - i) * sizeof(d->r[0]));
	d->r[i] = (struct tfs_dirty_range){ start, end };
	if (++d->n > TFS_DIRTY_MAX)
		coarsen(d);
}

unsigned tfs_dirty_take(struct tfs_dirty *d, uint64_t start, uint64_t end,
			struct tfs_dirty_range *out)
{
	struct tfs_dirty_range keep[TFS_DIRTY_MAX + 1];
	unsigned n = 0, k = 0;

	if (start >= end)
		return 0;
	for (unsigned i = 0; i < d->n; i++) {
		struct tfs_dirty_range r = d->r[i];

		if (r.end <= start || r.start >= end) {
			keep[k++] = r;
			continue;
		}
		if (out)
			out[n] = (struct tfs_dirty_range){ r.start > start ? r.start : start,
							   r.end < end ? r.end : end };
		n++;
		if (r.start < start && r.end > end) {
			/* Only one range can hold the whole of [start, end): k <= i here. */
			if (d->n + 1 > TFS_DIRTY_MAX) {
				keep[k++] = r;
				continue;
			}
			keep[k++] = (struct tfs_dirty_range){ r.start, start };
			keep[k++] = (struct tfs_dirty_range){ end, r.end };
		} else if (r.start < start) {
			keep[k++] = (struct tfs_dirty_range){ r.start, start };
		} else if (r.end > end) {
			keep[k++] = (struct tfs_dirty_range){ end, r.end };
		}
	}
	memcpy(d->r, keep, k * sizeof(keep[0]));
	d->n = k;
	return n;
}

uint64_t tfs_dirty_bytes(const struct tfs_dirty *d, uint64_t start, uint64_t end)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < d->n; i++) {
		uint64_t s = d->r[i].start > start ? d->r[i].start : start;
		uint64_t e = d->r[i].end < end ? d->r[i].end : end;

		if (s < e)
			sum += e - s;
	}
	return sum;
}
