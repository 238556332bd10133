/* The messages between daemons (UCX active messages, net.c and serve.c). Every message is
 * one header, the tensor's name after it for requests, and the bytes (a write's, a read's
 * answer) as the message's data, which UCX sends eagerly or by rendezvous as their size
 * says. Peers are daemons of one build on machines of one byte order. */
#ifndef TFS_NET_WIRE_H
#define TFS_NET_WIRE_H

#include <stdint.h>

#include "net/auth.h"

#define TFS_NET_MAGIC 0x31534654u      /* "TFS1" */
#define TFS_NET_AM_REQ 17              /* requests: client to server */
#define TFS_NET_AM_REP 18              /* replies: server to client */
#define TFS_NET_GIDS 32                /* groups sent with a request; more are cut */
#define TFS_NET_NAME_MAX 4096

/* CONFIRM: a reply's second message, after an answer sent straight from the tensor's
 * memory (flags TFS_NET_F_CONFIRM): its status says whether the bytes were the tensor's
 * (-EIO: pages of it were truncated away while they were sent). */
enum tfs_net_op { TFS_NET_HELLO = 1, TFS_NET_PROVE, TFS_NET_READ, TFS_NET_WRITE, TFS_NET_CONFIRM };
#define TFS_NET_F_CONFIRM 1u           /* replies: a CONFIRM follows; the request ends on it */
/* The most bytes one request moves (a build's own chunk, net.h, may be less). */
#define TFS_NET_CHUNK_MAX (16u << 20)

struct tfs_net_hdr {
	uint32_t magic;
	uint16_t op;
	uint16_t ngids;
	uint64_t req;                  /* the client's id of the request, echoed */
	uint64_t sid;                  /* session (from the server's HELLO answer) */
	int64_t status;                /* replies: bytes moved, or -errno */
	uint64_t ino, off, len;        /* the tensor's inode number (a renamed-over name is
	                                  not the same tensor), where, how much */
	uint32_t uid, gid;
	uint32_t gids[TFS_NET_GIDS];
	uint32_t namelen;
	uint32_t flags;
	uint8_t nonce[TFS_NET_NONCE];
	uint8_t mac[TFS_SHA256_LEN];
};

#endif
