/* fs/net/peer_rec.c: the record of a node's UCX address, as Redis hands it back (anyone who
 * writes there may have put anything in it). */
#include <errno.h>
#include <string.h>

#include "../../fs/net/peer_rec.c"
#include "tap.h"

static int parse(const char *s, struct tfs_peer_rec *r)
{
	return tfs_peer_rec_parse(s, strlen(s), r);
}

int main(void)
{
	static struct tfs_peer_rec r, back;
	static char buf[TFS_NET_REC_MAX], big[TFS_NET_REC_MAX + 16];
	const char *bad[] = {
		"", "tfs-ucx1", "tfs-ucx1 ", "tfs-ucx2 0123456789abcdef 00",
		"tfs-ucx1 0123456789abcdef", "tfs-ucx1 0123456789abcdef ",
		"tfs-ucx1 0123456789abcdeg 00", "tfs-ucx1 0123456789ABCDEF 00",
		"tfs-ucx1 0123456789abcdef 0", "tfs-ucx1 0123456789abcdef 0g",
		"tfs-ucx1 0123456789abcdef 00 ", "tfs-ucx1 0123456789abcdef 00\n",
		"tfs-ucx1  0123456789abcdef 00", "tfs-ucx1 0123456789abcde 00",
		"tfs-ucx1 0123456789abcdef 00  00", "tfs-ucx1 0123456789abcdef 00 0",
		"tfs-ucx1 0123456789abcdef 00 zz", "tfs-ucx1 0123456789abcdef 00\t00",
		"tfs-ucx1 0123456789abcdef 00 00 ",
	};

	r.epoch = 0x0123456789abcdefULL;
	ok(tfs_peer_rec_add(&r, "\x00\xff\x10", 3) == 0, "one address");
	ok(tfs_peer_rec_format(&r, buf, sizeof(buf)) == 0 &&
	   !strcmp(buf, "tfs-ucx1 0123456789abcdef 00ff10"), "formats: %s", buf);
	ok(parse(buf, &back) == 0 && back.epoch == r.epoch && back.naddr == 1 &&
	   back.len[0] == 3 && !memcmp(back.addr, r.addr, 3), "parses back what it formats");
	ok(tfs_peer_rec_add(&r, "\xab", 1) == 0 && tfs_peer_rec_add(&r, "\x01\x02", 2) == 0,
	   "two more addresses");
	ok(tfs_peer_rec_format(&r, buf, sizeof(buf)) == 0 &&
	   !strcmp(buf, "tfs-ucx1 0123456789abcdef 00ff10 ab 0102"), "formats three: %s", buf);
	ok(parse(buf, &back) == 0 && back.naddr == 3 && back.len[1] == 1 && back.len[2] == 2 &&
	   back.addr[back.off[1]] == 0xab && !memcmp(back.addr + back.off[2], "\x01\x02", 2),
	   "parses back three");
	{
		static struct tfs_peer_rec full;

		for (int i = 0; i < TFS_NET_ADDRS_MAX; i++)
			tfs_peer_rec_add(&full, "\x01", 1);
		ok(full.naddr == TFS_NET_ADDRS_MAX && tfs_peer_rec_add(&full, "\x01", 1) == -E2BIG &&
		   full.naddr == TFS_NET_ADDRS_MAX, "no address past the most: -E2BIG, unchanged");
		ok(tfs_peer_rec_format(&full, buf, sizeof(buf)) == 0 && parse(buf, &back) == 0 &&
		   back.naddr == TFS_NET_ADDRS_MAX, "the most addresses parse");
		strcat(buf, " 01");
		back.epoch = 7;
		ok(parse(buf, &back) == -E2BIG && back.epoch == 7,
		   "one address more: -E2BIG, unchanged");
	}
	ok(tfs_peer_rec_add(&back, "", 0) == -E2BIG, "an empty address: refused");
	ok(tfs_peer_rec_format(&r, buf, 20) == -ENOSPC, "too small a buffer: -ENOSPC");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		back.epoch = 7;
		ok(parse(bad[i], &back) == -EINVAL && back.epoch == 7, "refused, unchanged: '%s'",
		   bad[i]);
	}
	/* The longest address, then one byte more. */
	memcpy(big, "tfs-ucx1 0123456789abcdef ", 26);
	memset(big + 26, 'a', 2 * TFS_NET_ADDR_MAX);
	big[26 + 2 * TFS_NET_ADDR_MAX] = '\0';
	ok(parse(big, &back) == 0 && back.len[0] == TFS_NET_ADDR_MAX, "the longest address");
	memset(big + 26, 'a', 2 * TFS_NET_ADDR_MAX + 2);
	big[26 + 2 * TFS_NET_ADDR_MAX + 2] = '\0';
	back.epoch = 7;
	ok(parse(big, &back) == -E2BIG && back.epoch == 7, "one byte longer: -E2BIG, unchanged");
	ok(tfs_peer_rec_parse("tfs-ucx1 0123456789abcdef 00\0" "00", 31, &back) == -EINVAL,
	   "a NUL inside: refused");
	/* Addresses each within bounds, over the bound of all together. */
	{
		size_t at = 26, each = TFS_NET_ADDR_MAX;
		static char many[TFS_NET_REC_MAX + 2 * TFS_NET_ADDR_MAX + 16];

		memcpy(many, "tfs-ucx1 0123456789abcdef", 25);
		for (size_t k = 0; k <= TFS_NET_ADDRS_BYTES / each; k++) {
			many[at - 1] = ' ';
			memset(many + at, 'b', 2 * each);
			at += 2 * each + 1;
		}
		many[at - 1] = '\0';
		back.epoch = 7;
		ok(parse(many, &back) == -E2BIG && back.epoch == 7,
		   "over the bytes of all addresses: -E2BIG, unchanged");
	}
	printf("%d checks, %d failed\n", checks, failures);
	return failures != 0;
}
