/* Tier names and the sleep checksum (tier.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tier.h"
#include "strutil.h"

int tfs_tier_parse(const char *s, size_t len, int *device)
{
	uint64_t v;

	if (len == 3 && memcmp(s, "cpu", 3) == 0) {
		*device = TFS_DEVICE_CPU;
		return 0;
	}
	if (len == 0 || len > 7 || tfs_parse_u64(s, len, &v) || v > TFS_TIER_ORDINAL_MAX)
		return -EINVAL;
	*device = (int)v;
	return 0;
}

const char *tfs_tier_name(int device, char *buf, size_t size)
{
	if (device == TFS_DEVICE_CPU)
		snprintf(buf, size, "cpu");
	else
		snprintf(buf, size, "%d", device);
	return buf;
}

/* Four lanes of 64-bit words, each a multiply-rotate chain (as xxHash's rounds), so the
 * loop runs at memory speed; the piece's offset seeds it, so swapped pieces differ. */
static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL

static inline uint64_t round1(uint64_t acc, uint64_t in)
{
	acc += in * P2;
	acc = rotl(acc, 31);
	return acc * P1;
}

uint64_t tfs_sum_piece(const void *p, size_t len, uint64_t off)
{
	const unsigned char *b = p;
	uint64_t v[4] = { off + P1 + P2, off + P2, off, off - P1 };
	uint64_t h, w;
	size_t i = 0;

	for (; i + 32 <= len; i += 32)
		for (int k = 0; k < 4; k++) {
			memcpy(&w, b + i + 8 * k, 8);
			v[k] = round1(v[k], w);
		}
	h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18) + len;
	for (; i < len; i++)
		h = rotl(h ^ (b[i] * P3), 11) * P1;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}
