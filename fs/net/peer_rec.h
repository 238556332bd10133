/* The record a daemon publishes with its node lease (store/peer.h): how another daemon
 * reaches its UCX workers. "tfs-ucx1 <epoch> <address> [<address> ...]": the epoch 16 hex
 * digits, new at each start (a restarted daemon is a new peer: connections to the old one
 * are dropped), then one address per network thread (ucp_worker_get_address), each in
 * lower-case hex, separated by one space. A daemon of one network thread publishes the
 * one-address record of the daemons before it. No I/O, no allocation: a parser of bytes
 * from Redis, which anyone who can write there may have put. */
#ifndef TFS_NET_PEER_REC_H
#define TFS_NET_PEER_REC_H

#include <stddef.h>
#include <stdint.h>

/* The longest worker address kept (bytes): UCX's over TCP and shared memory are a few
 * hundred. */
#define TFS_NET_ADDR_MAX 4096
/* The most addresses in one record (a daemon's network threads, -o net_threads), and the
 * most bytes of them all together. */
#define TFS_NET_ADDRS_MAX 16
#define TFS_NET_ADDRS_BYTES 16384
/* The longest record: the prefix, the epoch, a space before each address and its hex. */
#define TFS_NET_REC_MAX (9 + 16 + TFS_NET_ADDRS_MAX + 2 * TFS_NET_ADDRS_BYTES + 1)

struct tfs_peer_rec {
	uint64_t epoch;
	int naddr;
	uint32_t off[TFS_NET_ADDRS_MAX], len[TFS_NET_ADDRS_MAX];  /* address i in addr[] */
	uint8_t addr[TFS_NET_ADDRS_BYTES];
};

/* Appends an address of len bytes to r: 0, or -E2BIG (r full, or the address empty or
 * over TFS_NET_ADDR_MAX); r is then unchanged. */
int tfs_peer_rec_add(struct tfs_peer_rec *r, const void *addr, size_t len);
/* Formats r into buf: 0, or -ENOSPC when size is too small or r has no address. */
int tfs_peer_rec_format(const struct tfs_peer_rec *r, char *buf, size_t size);
/* Parses len bytes at s into r: 0, or -EINVAL (wrong prefix, epoch, hex, an empty or odd
 * address, a space too many, anything after the last) or -E2BIG (an address over
 * TFS_NET_ADDR_MAX, more than TFS_NET_ADDRS_MAX of them, or over TFS_NET_ADDRS_BYTES in
 * all); r is then unchanged. */
int tfs_peer_rec_parse(const char *s, size_t len, struct tfs_peer_rec *r);

#endif
