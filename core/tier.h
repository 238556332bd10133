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

/* The steps of tfs_sum_piece, shared with the GPU's version of it (fs/mem/cuda/
 * sum_kernel.cu, which nvcc compiles: TFS_SUM_FN makes them device functions too), so that
 * a sum taken on the GPU equals the host's bit for bit. A piece: four lanes of 64-bit
 * words, word j of each 32 bytes into lane j, each lane a multiply-rotate chain (as
 * xxHash's rounds, so the loop runs at memory speed) seeded from the piece's offset, so
 * swapped pieces differ; then the lanes merged with the length, the bytes past the last
 * whole 32 one by one, and a final mix. */
#ifdef __CUDACC__
#define TFS_SUM_FN static inline __host__ __device__
#else
#define TFS_SUM_FN static inline
#endif
#define TFS_SUM_P1 0x9E3779B185EBCA87ULL
#define TFS_SUM_P2 0xC2B2AE3D27D4EB4FULL
#define TFS_SUM_P3 0x165667B19E3779F9ULL

TFS_SUM_FN uint64_t tfs_sum_rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}
/* Lane k's (0..3) starting value for a piece at offset off of the tensor. */
TFS_SUM_FN uint64_t tfs_sum_seed(uint64_t off, int k)
{
	return k == 0 ? off + TFS_SUM_P1 + TFS_SUM_P2 : k == 1 ? off + TFS_SUM_P2 :
	       k == 2 ? off : off - TFS_SUM_P1;
}
TFS_SUM_FN uint64_t tfs_sum_round(uint64_t acc, uint64_t in)
{
	acc += in * TFS_SUM_P2;
	acc = tfs_sum_rotl(acc, 31);
	return acc * TFS_SUM_P1;
}
TFS_SUM_FN uint64_t tfs_sum_merge(uint64_t v0, uint64_t v1, uint64_t v2, uint64_t v3,
				  uint64_t len)
{
	return tfs_sum_rotl(v0, 1) + tfs_sum_rotl(v1, 7) + tfs_sum_rotl(v2, 12) +
	       tfs_sum_rotl(v3, 18) + len;
}
TFS_SUM_FN uint64_t tfs_sum_byte(uint64_t h, unsigned char b)
{
	return tfs_sum_rotl(h ^ (b * TFS_SUM_P3), 11) * TFS_SUM_P1;
}
TFS_SUM_FN uint64_t tfs_sum_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= TFS_SUM_P2;
	h ^= h >> 29;
	h *= TFS_SUM_P3;
	h ^= h >> 32;
	return h;
}

#endif
