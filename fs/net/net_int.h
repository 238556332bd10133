/* What the network threads (net.c) and the callers' requests (request.c) share: a
 * request, a node's record, a connection, the threads' state. Private to fs/net. */
#ifndef TFS_NET_INT_H
#define TFS_NET_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include <ucp/api/ucp.h>

#include "meta.h"
#include "net/auth.h"
#include "net/net.h"
#include "net/peer_rec.h"
#include "net/wire.h"

#define MAX_PEERS 64                 /* nodes whose records are kept */
/* Connections of one network thread: one per worker address of each node at most. */
#define MAX_CONNS (MAX_PEERS * TFS_NET_ADDRS_MAX)
#define REC_FRESH_MS 1000            /* a peer's record read from Redis is used this long */

enum { P_NONE, P_HELLO, P_PROVE, P_READY };

struct op;
struct tfs_net_worker;

/* A node's record as last read (by the callers' side, under mu). An entry, once made,
 * keeps its node for the daemon's life: its index names it. */
struct node_rec {
	char node[TFS_NODE_MAX];
	struct tfs_peer_rec rec;
	int has_rec;
	int64_t rec_ms;
};

/* One network thread's connection to one worker (address aidx) of a node: its thread's
 * only, which alone reads and writes it. */
struct peer {
	struct tfs_net_worker *wk;
	int node;                    /* in tfs_nt.nodes */
	int aidx;
	uint64_t epoch;
	ucp_ep_h ep;
	int state;
	int err;                     /* set by UCX's error callback: close and fail */
	uint64_t sid;
	uint8_t nc[TFS_NET_NONCE], ns[TFS_NET_NONCE], sk[TFS_SHA256_LEN];
	struct op *waiting;          /* until the challenge is done */
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
	struct tfs_net_worker *wk;   /* the network thread that carries it */
	int node, aidx;              /* to which node, over which of its addresses */
	struct peer *peer;           /* the connection (set by wk's thread) */
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

/* One network thread: its own UCX context and worker, which no other thread calls. */
struct tfs_net_worker {
	int idx;
	ucp_context_h ctx;
	ucp_worker_h w;
	int efd, wake;
	pthread_t th;
	int started;
	struct op *submit, **submit_tail;  /* under mu */
	struct op *flight;           /* its thread only, as the three below */
	int nflight;
	struct peer *conns;
	int nconns;
	_Atomic uint64_t bytes;      /* carried: answers sent, reads received, writes */
};

/* The network threads' state (net.c), and the callers' side of it (request.c). */
struct tfs_net_thread {
	int nthreads;
	struct tfs_net_worker wk[TFS_NET_THREADS_MAX];
	int running;
	volatile int stop;
	int timeout_ms;
	uint64_t epoch;
	char rec[TFS_NET_REC_MAX];
	pthread_mutex_t mu;
	uint64_t next_req;
	uint64_t next_lane;          /* where a call's first chunk goes (atomic) */
	struct node_rec nodes[MAX_PEERS];  /* under mu */
	int nnodes;
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
/* The index of node's entry in tfs_nt.nodes (under mu), made when make and there is
 * room; -1 otherwise. */
int tfs_net_node_find(const char *node, int make);

#endif
