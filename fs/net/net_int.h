/* What the network thread (net.c) and the callers' requests (request.c) share: a
 * request, a peer, the thread's state. Private to fs/net. */
#ifndef TFS_NET_INT_H
#define TFS_NET_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include <ucp/api/ucp.h>

#include "meta.h"
#include "net/auth.h"
#include "net/peer_rec.h"
#include "net/wire.h"

#define MAX_PEERS 64
#define REC_FRESH_MS 1000            /* a peer's record read from Redis is used this long */

enum { P_NONE, P_HELLO, P_PROVE, P_READY };

struct op;

struct peer {
	char node[TFS_NODE_MAX];
	uint64_t epoch;
	ucp_ep_h ep;
	int state;
	int err;                     /* set by UCX's error callback: close and fail */
	uint64_t sid;
	uint8_t nc[TFS_NET_NONCE], ns[TFS_NET_NONCE], sk[TFS_SHA256_LEN];
	struct op *waiting;          /* until the challenge is done */
	/* The record as last read (by tfs_net_io, under mu). */
	struct tfs_peer_rec rec;
	int has_rec;
	int64_t rec_ms;
};

/* One request. Its memory is its own (hdr, and data unless ext): a caller who gives up at
 * its deadline leaves it to the network thread, which frees it when UCX is done with it.
 * An ext request's data is the caller's (tfs_net_read_into), who waits for busy to clear
 * before it takes it back. */
struct op {
	int refs;                    /* under mu */
	int done;
	ssize_t result;
	pthread_cond_t cv;
	struct peer *peer;
	uint64_t epoch;
	int64_t deadline_ms;
	struct tfs_net_hdr *hdr;     /* header + name */
	size_t hlen;
	void *data;
	size_t len;
	int write;
	int ext;                     /* data is the caller's, not freed here */
	int busy;                    /* UCX may write into data (under mu) */
	int data_in;                 /* a read's bytes are in (network thread only) */
	ssize_t got;
	int want_confirm;            /* the answer came from the tensor's memory: the request */
	int confirmed;               /* ends on its CONFIRM, which says whether the bytes were */
	ssize_t cstatus;             /* whole (network thread only) */
	int in_flight;               /* sent, reply awaited (network thread only) */
	int handshake;               /* a HELLO or PROVE, not a caller's */
	struct op *next;             /* in the submit queue, a peer's waiting list */
	struct op *all_next;         /* in the in-flight list */
};

/* The network thread's state (net.c), and the callers' side of it (request.c). */
struct tfs_net_thread {
	ucp_context_h ctx;
	ucp_worker_h w;
	int efd, wake;
	pthread_t th;
	int running;
	volatile int stop;
	int timeout_ms;
	uint64_t epoch;
	char rec[TFS_NET_REC_MAX];
	pthread_mutex_t mu;
	struct op *submit, **submit_tail;
	struct op *flight;           /* network thread only */
	int nflight;
	uint64_t next_req;
	struct peer peers[MAX_PEERS];
	int npeers;
	int64_t said_ms;
	int zero_copy;
};
extern struct tfs_net_thread tfs_nt;

/* CLOCK_MONOTONIC in ms. */
int64_t tfs_net_now_ms(void);
/* A request with namelen bytes of name after its header and datalen bytes of its own (0:
 * none), one reference: NULL without memory. */
struct op *tfs_net_op_new(size_t namelen, size_t datalen);
/* Drops a reference (takes mu): the last frees o. */
void tfs_net_op_put(struct op *o);
/* The peer of node (under mu), made when make and there is room; NULL otherwise. */
struct peer *tfs_net_peer_find(const char *node, int make);

#endif
