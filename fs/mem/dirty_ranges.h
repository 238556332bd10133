/* Which bytes of a preallocated host segment may hold something other than zeros
 * (dirty_ranges.c, docs/tiers.md#preallocation): a sorted set of dirty ranges, so that a
 * create zeroes only the parts of its chunk a freed tensor left, not memory fresh from
 * the kernel.
 *
 * Bounded: at most TFS_DIRTY_MAX ranges, in the structure itself (no allocation, so no
 * call can fail). A range that would make one more merges the two neighbours with the
 * smallest clean gap between them: the gap is then counted dirty, which costs a memset
 * later and is never wrong. Everything here over-approximates: a byte is clean only when
 * it is known to be zero.
 *
 * Offsets are bytes from the segment's start. Not thread-safe: the owner's lock
 * (host_pool.c: the host pool's mu) is held around every call. */
#ifndef TFS_FS_DIRTY_RANGES_H
#define TFS_FS_DIRTY_RANGES_H

#include <stdint.h>

#define TFS_DIRTY_MAX 32

struct tfs_dirty_range {
	uint64_t start, end;    /* [start, end), start < end */
};

struct tfs_dirty {
	unsigned n;
	/* Sorted, disjoint and never touching (touching ranges are merged); one slot more
	 * than the bound, for the insert that is merged away at once. */
	struct tfs_dirty_range r[TFS_DIRTY_MAX + 1];
};

/* Every byte clean: memory fresh from the kernel. */
void tfs_dirty_init(struct tfs_dirty *d);
/* [0, size) dirty: memory whose contents nobody vouches for (adopted, found). */
void tfs_dirty_init_all(struct tfs_dirty *d, uint64_t size);
/* [start, end) may hold anything from now on (a freed tensor's chunk). Empty ranges are
 * ignored. */
void tfs_dirty_add(struct tfs_dirty *d, uint64_t start, uint64_t end);
/* [start, end) leaves the set (a chunk handed out: its owner zeroes or writes it, and
 * adds it back when it frees it). The dirty parts it held are written to out (at most
 * TFS_DIRTY_MAX ranges, clipped to [start, end), in order) when out is not NULL; returns
 * their number. When taking the middle of one range out would need a slot beyond the
 * bound, that range stays whole in the set (still reported): dirty, never wrong. */
unsigned tfs_dirty_take(struct tfs_dirty *d, uint64_t start, uint64_t end,
			struct tfs_dirty_range *out);
/* Bytes of [start, end) counted dirty. */
uint64_t tfs_dirty_bytes(const struct tfs_dirty *d, uint64_t start, uint64_t end);

#endif
