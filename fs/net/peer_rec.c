/* The record of a node's UCX address (peer_rec.h). */
#include <errno.h>
#include <string.h>

#include "net/peer_rec.h"
#include "strutil.h"

#define PREFIX "tfs-ucx1 "

int tfs_peer_rec_format(const struct tfs_peer_rec *r, char *buf, size_t size)
{
	size_t need = strlen(PREFIX) + 16 + 1 + 2 * r->addrlen + 1;
	uint8_t e[8];

	if (size < need || r->addrlen == 0 || r->addrlen > TFS_NET_ADDR_MAX)
		return -ENOSPC;
	for (int i = 0; i < 8; i++)
		e[i] = (uint8_t)(r->epoch >> (56 - 8 * i));
	memcpy(buf, PREFIX, strlen(PREFIX));
	tfs_hex_encode(e, 8, buf + strlen(PREFIX));
	buf[strlen(PREFIX) + 16] = ' ';
	tfs_hex_encode(r->addr, r->addrlen, buf + strlen(PREFIX) + 17);
	return 0;
}

int tfs_peer_rec_parse(const char *s, size_t len, struct tfs_peer_rec *r)
{
	size_t p = strlen(PREFIX), hex;
	uint8_t e[8];
	if (len < p + 17 || memcmp(s, PREFIX, p) || s[p + 16] != ' ')
		return -EINVAL;
	for (size_t i = p; i < p + 16; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return -EINVAL;
	hex = len - p - 17;
	if (hex == 0 || hex % 2)
		return -EINVAL;
	if (hex / 2 > TFS_NET_ADDR_MAX)
		return -E2BIG;
	for (size_t i = p + 17; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return -EINVAL;
	/* Every byte checked above: r changes only now. */
	if (tfs_hex_decode(s + p, 16, e, 8))
		return -EINVAL;
	if (tfs_hex_decode(s + p + 17, hex, r->addr, hex / 2))
		return -EINVAL;
	r->addrlen = hex / 2;
	r->epoch = 0;
	for (int i = 0; i < 8; i++)
		r->epoch = r->epoch << 8 | e[i];
	return 0;
}
