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

uint64_t tfs_sum_piece(const void *p, size_t len, uint64_t off)
{
	const unsigned char *b = p;
	uint64_t v[4], h, w;
	size_t i = 0;

	for (int k = 0; k < 4; k++)
		v[k] = tfs_sum_seed(off, k);
	for (; i + 32 <= len; i += 32)
		for (int k = 0; k < 4; k++) {
			memcpy(&w, b + i + 8 * k, 8);
			v[k] = tfs_sum_round(v[k], w);
		}
	h = tfs_sum_merge(v[0], v[1], v[2], v[3], len);
	for (; i < len; i++)
		h = tfs_sum_byte(h, b[i]);
	return tfs_sum_mix(h);
}
