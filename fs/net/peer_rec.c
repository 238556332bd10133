/* The record of a node's UCX addresses (peer_rec.h). */
#include <errno.h>
#include <string.h>

#include "net/peer_rec.h"
#include "strutil.h"

#define PREFIX "tfs-ucx1 "

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

int tfs_peer_rec_add(struct tfs_peer_rec *r, const void *addr, size_t len)
{
	size_t used = r->naddr ? r->off[r->naddr - 1] + r->len[r->naddr - 1] : 0;

	if (len == 0 || len > TFS_NET_ADDR_MAX || r->naddr >= TFS_NET_ADDRS_MAX ||
	    used + len > TFS_NET_ADDRS_BYTES)
		return -E2BIG;
	memcpy(r->addr + used, addr, len);
	r->off[r->naddr] = (uint32_t)used;
	r->len[r->naddr] = (uint32_t)len;
	r->naddr++;
	return 0;
}

int tfs_peer_rec_format(const struct tfs_peer_rec *r, char *buf, size_t size)
{
	size_t need = strlen(PREFIX) + 16 + 1, at;
	uint8_t e[8];

	if (r->naddr < 1 || r->naddr > TFS_NET_ADDRS_MAX)
		return -ENOSPC;
	for (int i = 0; i < r->naddr; i++)
		need += 1 + 2 * (size_t)r->len[i];
	if (size < need)
		return -ENOSPC;
	for (int i = 0; i < 8; i++)
		e[i] = (uint8_t)(r->epoch >> (56 - 8 * i));
	memcpy(buf, PREFIX, strlen(PREFIX));
	tfs_hex_encode(e, 8, buf + strlen(PREFIX));
	at = strlen(PREFIX) + 16;
	for (int i = 0; i < r->naddr; i++) {
		buf[at++] = ' ';
		tfs_hex_encode(r->addr + r->off[i], r->len[i], buf + at);
		at += 2 * (size_t)r->len[i];
	}
	buf[at] = '\0';
	return 0;
}

int tfs_peer_rec_parse(const char *s, size_t len, struct tfs_peer_rec *r)
{
	size_t p = strlen(PREFIX), at, start[TFS_NET_ADDRS_MAX], hex[TFS_NET_ADDRS_MAX], total = 0;
	int n = 0;
	uint8_t e[8];

	if (len < p + 17 || memcmp(s, PREFIX, p) || s[p + 16] != ' ')
		return -EINVAL;
	for (size_t i = p; i < p + 16; i++)
		if (!is_hex(s[i]))
			return -EINVAL;
	/* Each address: a space, then hex up to the next space or the end. */
	for (at = p + 16; at < len;) {
		size_t b = ++at;

		while (at < len && is_hex(s[at]))
			at++;
		if (at < len && s[at] != ' ')
			return -EINVAL;
		if (at == b || (at - b) % 2)
			return -EINVAL;
		if ((at - b) / 2 > TFS_NET_ADDR_MAX || n == TFS_NET_ADDRS_MAX ||
		    total + (at - b) / 2 > TFS_NET_ADDRS_BYTES)
			return -E2BIG;
		start[n] = b;
		hex[n++] = at - b;
		total += (at - b) / 2;
	}
	if (n == 0)
		return -EINVAL;
	/* Every byte checked above: r changes only now. */
	if (tfs_hex_decode(s + p, 16, e, 8))
		return -EINVAL;
	total = 0;
	for (int i = 0; i < n; i++) {
		if (tfs_hex_decode(s + start[i], hex[i], r->addr + total, hex[i] / 2))
			return -EINVAL;
		r->off[i] = (uint32_t)total;
		r->len[i] = (uint32_t)(hex[i] / 2);
		total += hex[i] / 2;
	}
	r->naddr = n;
	r->epoch = 0;
	for (int i = 0; i < 8; i++)
		r->epoch = r->epoch << 8 | e[i];
	return 0;
}
