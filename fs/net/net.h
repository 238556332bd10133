/* Another node's tensor bytes over UCX (net.c, serve.c).
 *
 * With a cluster key (--cluster-key), each daemon runs -o net_threads network threads, each
 * owning a UCX context and worker of its own (UCS_THREAD_MODE_SINGLE: only that thread
 * calls them). The workers' addresses are published together beside the node lease
 * (store/peer.h, fs/net/peer_rec.h); each thread answers other daemons' reads and writes of
 * this node's tensors that arrive on its worker (serve.c), and carries a share of this
 * daemon's requests for other nodes' tensors (tfs_net_io): a call's chunks go round the
 * threads and round the owner's addresses, so that one large transfer uses all of both
 * sides' threads. FUSE workers hand them over through a queue per thread and wait for
 * them, each with a deadline.
 *
 * Active messages, not tag matching or streams: a request is one message (header, name,
 * and for a write its bytes), its reply another, matched by the request's id; UCX picks
 * eager or rendezvous (zero-copy over transports that have it) by size, and a reply carries
 * the reply endpoint, so the server needs no connection of its own back. Requests are
 * chunked (TFS_NET_CHUNK) and all chunks of one call are in flight together.
 *
 * Without a key nothing starts, and other nodes' bytes stay EREMOTE (logged once, saying
 * why). Locks: tfs_net_io takes no lock of the daemon's and must be called without ns; the
 * network threads take ns and a tensor's io lock (in that order) to serve, never waiting for
 * either. */
#ifndef TFS_NET_NET_H
#define TFS_NET_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "net/peer_rec.h"
#include "net/wire.h"

/* Bytes per request: a pull of 16 MiB is 4 requests in flight together. At most
 * TFS_NET_CHUNK_MAX (wire.h), what a server accepts. */
#ifndef TFS_NET_CHUNK
#define TFS_NET_CHUNK (4u << 20)
#endif
/* Requests of this daemon in flight at once, over all peers; more wait their turn. */
#define TFS_NET_INFLIGHT 64
/* The most network threads (-o net_threads): one address each in the record. */
#define TFS_NET_THREADS_MAX TFS_NET_ADDRS_MAX

/* Who asks: the requesting process's ids, checked by the owning node as its own mount
 * would (mode bits; root may do anything). */
struct tfs_net_cred {
	uint32_t uid, gid;
	uint32_t ngids;
	uint32_t gids[TFS_NET_GIDS];
};

/* Starts nthreads network threads (1 to TFS_NET_THREADS_MAX) when a key was loaded
 * (auth.h): 0, or -errno (logged) when UCX cannot start. timeout_ms bounds each wait for a
 * peer. zero_copy 0 (-o net_staged): every answer and pull goes through a buffer of the
 * daemon's, as for device memory (a comparison, or a transport that misbehaves with shared
 * mappings). Without a key: 0, logged. */
int tfs_net_start(int timeout_ms, int zero_copy, int nthreads);
/* Whether bytes go straight from and into tensors' host memory (not -o net_staged). */
int tfs_net_zero_copy(void);
/* Stops the thread and closes UCX. Requests in flight fail with -ESHUTDOWN. */
void tfs_net_stop(void);
/* Whether other nodes' bytes can be asked for. */
int tfs_net_on(void);
/* The bytes each network thread carried since the start (answers sent, reads received,
 * writes sent or received), into out[0..max): the number of threads (0: none running).
 * Any thread. */
int tfs_net_thread_bytes(uint64_t *out, int max);
/* Adds n to the calling network thread's count of bytes carried (serve.c). */
void tfs_net_carried(uint64_t n);
/* Reads (wr 0) or writes len bytes at off of node's tensor name (whose inode number is
 * ino), for cr. Returns the bytes moved (a read past the end is short), or -EREMOTE (no
 * key, or node publishes no address: logged), -EACCES (cr may not, or the peer failed the
 * key's challenge), -ENOENT/-ESTALE (no such tensor there now), -ETIMEDOUT (no answer by
 * the deadline), -ECONNRESET (the peer went away), -EIO. buf is the caller's again when it
 * returns, whatever the result. */
ssize_t tfs_net_io(const char *node, const char *name, uint64_t ino, int wr, void *buf,
		   size_t len, uint64_t off, const struct tfs_net_cred *cr);

/* tfs_net_io for a read whose chunks go to sink as each arrives (in order), from the
 * request's own buffer, instead of one buffer of the caller's: sink(arg, at, data, n) puts
 * n bytes that belong at at (from the start of the range); its non-zero return (-errno)
 * ends the read with it. wr and buf are as tfs_net_io's when sink is NULL. */
/* tfs_net_io's read, received straight into dst (UCX writes the bytes there as they
 * arrive, no copy of the daemon's): dst is the caller's again only once this returns,
 * which it does only once UCX let go of every part of it, whatever the result. */
ssize_t tfs_net_read_into(const char *node, const char *name, uint64_t ino, void *dst,
			  size_t len, uint64_t off, const struct tfs_net_cred *cr);

typedef int (*tfs_net_sink)(void *arg, uint64_t at, const void *data, size_t n);
ssize_t tfs_net_read_each(const char *node, const char *name, uint64_t ino, int wr,
			  const void *buf, size_t len, uint64_t off,
			  const struct tfs_net_cred *cr, tfs_net_sink sink, void *arg);

/* --- the server's side (serve.c), run on the network threads by net.c. Each thread
 * serves what arrives on its own worker, with state of its own (sessions, answers in
 * flight, waiting requests): lane is its index. --- */
struct tfs_net_serve;
/* Answers a request that arrived (hdr and the name after it, hlen bytes in all; data the
 * bytes, or UCX's rendezvous descriptor when rndv), inside UCX's callback. reply_ep is
 * where the answer goes. 1 when it kept the rendezvous descriptor for later (the callback
 * answers UCS_INPROGRESS), else 0. A read is answered straight from the tensor's memory
 * where that is host memory, lent to UCX until it is done with it (mem/backend.h
 * host_span). */
int tfs_net_serve_request(void *worker, void *reply_ep, const void *hdr, size_t hlen,
			  void *data, size_t len, int rndv);
/* Serves requests that had to wait (the namespace lock or a tensor's io busy while this
 * thread holds tensors' io for answers in flight), outside UCX's progress: 1 when some
 * still wait (call again soon), else 0. */
int tfs_net_serve_pending(void);
/* At start, before the first request: answers from tensors' memory where it is host
 * memory unless !zero_copy, the server's bounds shared out between nlanes threads, and
 * the staging threads (stage.h), whose finished answers are announced with wake(lane) and
 * sent by tfs_net_serve_staged (network thread: 1 when it sent any). */
int tfs_net_serve_start(void (*wake)(int lane), int zero_copy, int nlanes);
int tfs_net_serve_staged(void);
/* On each network thread, first: the server's state this thread uses (lane). */
void tfs_net_serve_thread(int lane);
/* Answers and writes UCX still carries for lane's server (its network thread, or once it
 * ended): a daemon that takes none keeps them for as long as its connection looks alive. */
int tfs_net_serve_inflight(int lane);
/* At stop, on each network thread just before it ends: the connections that still carry
 * them are closed by force, which ends them (their memory given back). */
void tfs_net_serve_close(void *worker);
/* Drops every lane's sessions and what they hold (at stop, once the threads ended). */
void tfs_net_serve_fini(void);

#endif
