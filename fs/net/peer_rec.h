/* The record a daemon publishes with its node lease (store/peer.h): how another daemon
 * reaches its UCX worker. "tfs-ucx1 <epoch> <address>": the epoch 16 hex digits, new at
 * each start of the worker (a restarted daemon is a new peer: connections to the old one
 * are dropped), the address the worker's (ucp_worker_get_address) in lower-case hex. No
 * I/O, no allocation: a parser of bytes from Redis, which anyone who can write there may
 * have put. */
#ifndef TFS_NET_PEER_REC_H
#define TFS_NET_PEER_REC_H

#include <stddef.h>
#include <stdint.h>

/* The longest worker address kept (bytes): UCX's over TCP and shared memory are a few
 * hundred. */
#define TFS_NET_ADDR_MAX 4096
/* The longest record: the prefix, the epoch, two spaces and the hex of the address. */
#define TFS_NET_REC_MAX (9 + 16 + 2 + 2 * TFS_NET_ADDR_MAX + 1)

struct tfs_peer_rec {
	uint64_t epoch;
	size_t addrlen;
	uint8_t addr[TFS_NET_ADDR_MAX];
};

/* Formats r into buf: 0, or -ENOSPC when size is too small. */
int tfs_peer_rec_format(const struct tfs_peer_rec *r, char *buf, size_t size);
/* Parses len bytes at s into r: 0, or -EINVAL (wrong prefix, epoch, hex, an empty or odd
 * address, anything after it) or -E2BIG (an address over TFS_NET_ADDR_MAX); r is then
 * unchanged. */
int tfs_peer_rec_parse(const char *s, size_t len, struct tfs_peer_rec *r);

#endif
