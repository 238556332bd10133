/* A tier's name and the checksum of a tensor asleep in the host tier (docs/tiers.md).
 * A tier is "cpu" (host shared memory, TFS_DEVICE_CPU) or a GPU ordinal. No I/O. */
#ifndef TFS_TIER_H
#define TFS_TIER_H

#include <stddef.h>
#include <stdint.h>

#include "tensorfs.h"      /* TFS_DEVICE_CPU */

#define TFS_TIER_ORDINAL_MAX (1 << 20)   /* ordinals the text forms accept: 0..this */
#define TFS_TIER_NAME_MAX 12             /* "cpu" or up to 7 digits, and a NUL */

/* Parses len bytes: exactly "cpu" or a decimal ordinal 0..TFS_TIER_ORDINAL_MAX (no sign,
 * no space). 0 with *device, or -EINVAL with *device unchanged. */
int tfs_tier_parse(const char *s, size_t len, int *device);
/* Writes "cpu" or the ordinal into buf (size >= TFS_TIER_NAME_MAX). Returns buf. */
const char *tfs_tier_name(int device, char *buf, size_t size);

/* The checksum of bytes that sleep in the host tier: 64-bit, computed piece by piece in
 * any order and by any number of threads as the copy goes (each piece's sum is
 * independent of the others and they add up), so no second pass over the memory is
 * needed. Pieces begin at multiples of TFS_SUM_PIECE (the last may be shorter).
 * tfs_sum_piece sums one piece: the bytes p[0..len) that lie at offset off of the tensor;
 * the sum of a tensor is tfs_sum_final(TFS_SUM_EMPTY + the sum of its pieces), modulo
 * 2^64 (tfs_sum_add), never 0: 0 in a record means "no checksum". */
#define TFS_SUM_PIECE (1u << 20)
#define TFS_SUM_EMPTY 0x9e3779b97f4a7c15ULL
uint64_t tfs_sum_piece(const void *p, size_t len, uint64_t off);
static inline uint64_t tfs_sum_add(uint64_t sum, uint64_t piece)
{
	return sum + piece;
}
static inline uint64_t tfs_sum_final(uint64_t sum)
{
	return sum ? sum : 1;
}

#endif
