/* Tiers on bytes: tier names (core/tier.c), per-tier size lists (fs/mem/tiers.c
 * tfs_tiers_parse_sizes, -o max_bytes and --preallocate), and the sleep checksum's
 * properties: any piece order gives the same sum, a changed byte or swapped pieces a
 * different one, never 0. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../fs/mem/tiers.c"

#include "tap.h"

static void name_ok(const char *s, int want)
{
	int dev = 12345;

	ok(tfs_tier_parse(s, strlen(s), &dev) == 0 && dev == want, "tier '%s' -> %d", s, want);
}

static void name_bad(const char *s, size_t len)
{
	int dev = 12345;

	ok(tfs_tier_parse(s, len, &dev) == -EINVAL && dev == 12345, "tier '%.*s' refused",
	   (int)len, s);
}

static void sizes_bad(const char *s)
{
	struct tfs_tier_sizes t;

	memset(&t, 0x5a, sizeof(t));
	ok(tfs_tiers_parse_sizes(s, &t) == -EINVAL && t.all == 0x5a5a5a5a5a5a5a5aull,
	   "sizes '%s' refused, nothing written", s ? s : "(null)");
}

static uint64_t sum_of(const unsigned char *b, size_t n, int reverse)
{
	uint64_t s = TFS_SUM_EMPTY;
	size_t np = (n + TFS_SUM_PIECE - 1) / TFS_SUM_PIECE;

	for (size_t k = 0; k < np; k++) {
		size_t i = reverse ? np - 1 - k : k;
		size_t off = i * TFS_SUM_PIECE;
		size_t len = n - off < TFS_SUM_PIECE ? n - off : TFS_SUM_PIECE;

		s = tfs_sum_add(s, tfs_sum_piece(b + off, len, off));
	}
	return tfs_sum_final(s);
}

int main(void)
{
	struct tfs_tier_sizes t;
	char buf[TFS_TIER_NAME_MAX];
	size_t n = 3 * TFS_SUM_PIECE + 77;
	unsigned char *b = malloc(n);
	uint64_t s0;

	{
		struct tfs_tier_sizes pre, caps;

		memset(&caps, 0, sizeof(caps));
		ok(tfs_tiers_parse_sizes("cpu:8M,1:4M", &pre) == 0 &&
		   tfs_tiers_check_prealloc(&pre, &caps, 1) == NULL,
		   "--preallocate cpu:8M,1:4M fits a mount serving cpu");
		ok(tfs_tiers_check_prealloc(&pre, &caps, 0) != NULL,
		   "cpu where no host tier is served: refused");
		ok(tfs_tiers_parse_sizes("cpu:4M", &caps) == 0 &&
		   tfs_tiers_check_prealloc(&pre, &caps, 1) != NULL,
		   "cpu:8M over --max-bytes cpu:4M: refused");
		ok(tfs_tiers_parse_sizes("1:4M", &caps) == 0 &&
		   tfs_tiers_check_prealloc(&pre, &caps, 1) == NULL,
		   "1:4M within --max-bytes 1:4M");
		ok(tfs_tiers_parse_sizes("2M", &caps) == 0 &&
		   tfs_tiers_check_prealloc(&pre, &caps, 1) != NULL,
		   "over the one size of --max-bytes: refused");
		ok(tfs_tiers_parse_sizes("cpu:1M,1:16M", &caps) == 0 &&
		   tfs_tiers_check_prealloc(&pre, &caps, 1) != NULL &&
		   tfs_tiers_parse_sizes("1:16M", &caps) == 0 &&
		   tfs_tiers_check_prealloc(&pre, &caps, 1) == NULL,
		   "each tier within its own cap, or none");
	}
	name_ok("cpu", TFS_DEVICE_CPU);
	name_ok("0", 0);
	name_ok("7", 7);
	name_ok("1048576", 1 << 20);
	name_bad("", 0);
	name_bad("CPU", 3);
	name_bad("cpu ", 4);
	name_bad("cp", 2);
	name_bad("-1", 2);
	name_bad("-2", 2);
	name_bad("1048577", 7);
	name_bad("99999999", 8);
	name_bad("cpu\0", 4);
	name_bad("0x1", 3);
	ok(strcmp(tfs_tier_name(TFS_DEVICE_CPU, buf, sizeof(buf)), "cpu") == 0 &&
	   strcmp(tfs_tier_name(3, buf, sizeof(buf)), "3") == 0, "names: cpu and 3");

	ok(tfs_tiers_parse_sizes("64G", &t) == 0 && t.all == 64ull << 30 && !t.has_cpu &&
	   !t.devmask, "'64G': every tier");
	ok(tfs_tier_size(&t, TFS_DEVICE_CPU) == 64ull << 30 && tfs_tier_size(&t, 5) == 64ull << 30,
	   "one size is each tier's");
	ok(tfs_tiers_parse_sizes("cpu:1M,0:10M", &t) == 0 && t.all == 0 && t.has_cpu &&
	   t.cpu == 1 << 20 && t.devmask == 1 && t.dev[0] == 10 << 20,
	   "'cpu:1M,0:10M': cpu and device 0");
	ok(tfs_tier_size(&t, 1) == 0 && tfs_tier_size(&t, 0) == 10 << 20 &&
	   tfs_tier_size(&t, TFS_DEVICE_CPU) == 1 << 20, "a tier not named has no size");
	ok(tfs_tiers_parse_sizes("0:40G/cpu:64G", &t) == 0 && t.cpu == 64ull << 30 &&
	   t.dev[0] == 40ull << 30, "'0:40G/cpu:64G' (the -o spelling)");
	ok(tfs_tiers_parse_sizes("3:512", &t) == 0 && t.devmask == 8 && t.dev[3] == 512,
	   "'3:512': bytes without a unit");
	sizes_bad(NULL);
	sizes_bad("");
	sizes_bad("cpu:1M,cpu:2M");
	sizes_bad("0:1M,0:1M");
	sizes_bad("cpu:");
	sizes_bad(":1M");
	sizes_bad("cpu:1M,");
	sizes_bad("cpu:1M,,0:1M");
	sizes_bad("gpu:1M");
	sizes_bad("64:1M");
	sizes_bad("cpu:1X");
	sizes_bad("cpu:-1M");
	sizes_bad("1M,2M");
	sizes_bad("cpu:99999999999T");
	sizes_bad("12Q");

	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)((i * 2654435761u) >> 13);
	s0 = sum_of(b, n, 0);
	ok(s0 != 0, "a sum is never 0");
	ok(sum_of(b, n, 1) == s0, "pieces summed in any order give the same sum");
	b[TFS_SUM_PIECE + 5] ^= 1;
	ok(sum_of(b, n, 0) != s0, "one bit changed: another sum");
	b[TFS_SUM_PIECE + 5] ^= 1;
	b[n - 1] ^= 0x80;
	ok(sum_of(b, n, 0) != s0, "the last byte changed: another sum");
	b[n - 1] ^= 0x80;
	{
		/* Two pieces swapped: the offsets seed each piece, so the sum changes. */
		unsigned char *tmp = malloc(TFS_SUM_PIECE);

		memcpy(tmp, b, TFS_SUM_PIECE);
		memcpy(b, b + TFS_SUM_PIECE, TFS_SUM_PIECE);
		memcpy(b + TFS_SUM_PIECE, tmp, TFS_SUM_PIECE);
		ok(sum_of(b, n, 0) != s0, "two pieces swapped: another sum");
		free(tmp);
	}
	memset(b, 0, n);
	ok(sum_of(b, n, 0) != sum_of(b, n - 1, 0), "zeros of two lengths differ");
	/* Known answers: a sum recorded at sleep by one build is checked at wake by another
	 * (a daemon upgraded between), and the GPU's version must give the same. */
	for (size_t i = 0; i < 1000; i++)
		b[i] = (unsigned char)(i * 131 + 7);
	ok(tfs_sum_piece(b, 33, 0) == 0xeab76ab4820ad2f5ull, "the sum of 33 bytes is the known one");
	ok(tfs_sum_piece(b, 1000, TFS_SUM_PIECE) == 0x9eb0c8c8899eb965ull,
	   "the sum of 1000 bytes at offset 1 MiB is the known one");
	free(b);
	printf("%d passed, %d failed\n", checks - failures, failures);
	return failures ? 1 : 0;
}
