/* The node lease (lease.c): one daemon per node name on a Redis. Its key is the live-node
 * registry <prefix>:alive:<node> = "<token> <pid> <host>" (pid: the memory keeper's), taken with a random token of
 * the daemon's own before it touches any record of the node, renewed once a second in one
 * script that renews only a lease with that token, and deleted at a clean unmount only if
 * it is still ours. A daemon the keeper restarts after a crash gets its predecessor's token
 * (TFS_LEASE in its environment) and takes the lease over at once.
 *
 * A lease lost while running (Redis emptied, or a stall past its TTL) is taken again when
 * free. When another daemon took it, this one says so in the log and stops writing the
 * node's records: it acts as though Redis were unreachable (tfs_redis.lease_lost makes
 * conn.c's and the writer's connections fail, so metadata changes fail with EIO and the
 * queue is not served); open tensors keep reading and writing. When the lease is free
 * again the daemon takes it back and rewrites its records, as after an outage.
 *
 * Renewals run on a thread of their own (tfs_lease_keep), which waits on nothing of the
 * daemon but its own Redis connection: a daemon whose other threads wait (on a keeper busy
 * in a slow cudaMalloc or pinning a large preallocation, on a lock) keeps its node, and a
 * second daemon of the node is refused meanwhile.
 *
 * Threads: tfs_lease_init, tfs_lease_acquire and tfs_lease_keep run on the main thread, the
 * first two before the daemon forks into the background; tfs_lease_check and
 * tfs_lease_release from any thread. The lease's own mutex is taken in them, held
 * across a renewal (connect, Sentinel lookup, one script: each bounded by a timeout); under
 * it only conn.c's and the log's locks are taken. No other lock of the daemon is held by
 * or taken in them.
 *
 * What the lease says is that the daemon's process lives and reaches Redis, not that it
 * serves: a daemon whose other threads are stuck keeps its node. */
#ifndef TFS_LEASE_H
#define TFS_LEASE_H

#include <stddef.h>

#include <hiredis/hiredis.h>

/* Lifetime of the lease without a renewal. */
#define TFS_LEASE_MS 5000

/* The token, first thing at start-up (before anything is started that would inherit the
 * environment): restart (a keeper's restart) takes it from TFS_LEASE, which it removes from
 * the environment, else makes a new random one. 0 or -EIO (logged). */
int tfs_lease_init(int restart);
/* Takes the lease at start-up. 0; -EBUSY when another daemon holds it (logged: "node NAME
 * is held by another daemon (pid P on host H); use --node"); -EIO/-EPROTO when Redis fails
 * (logged). Nothing in Redis changes on failure. */
int tfs_lease_acquire(void);
/* The token, for the keeper to pass to the daemon it restarts. */
const char *tfs_lease_token(void);
/* A renewal now: retakes the lease when it is free, sets or clears tfs_redis.lease_lost.
 * 0 while the lease is ours, -EBUSY while another's, -EIO when Redis did not answer
 * (nothing changes). For the start, once the backend runs, and for housekeeping before it
 * rewrites the node's records (after an outage or a Redis that lost them), which it must
 * do only while the lease is ours. */
int tfs_lease_check(void);
/* Starts the renewals' thread: tfs_lease_check's work at once (the value then names the
 * keeper's pid), then once a second until tfs_lease_release. Call after the last fork that
 * must not carry the thread's state (the keeper's start). 0, or a negative errno
 * (logged). */
int tfs_lease_keep(void);
/* Stops the renewals' thread, deletes the lease if it is still ours (once: later calls do
 * nothing), and closes its connection. */
void tfs_lease_release(void);

/* --- the live-node registry and node lease: <prefix>:alive:<node> = "<token> <pid> <host> <pid space>",
 * with a TTL its daemon renews (lease.c). Both run on the caller's connection c (the
 * lease's own, which a lost lease does not close), not through the writer. --- */
/* Takes this node's lease for token (value "<token> <who>", expiring after ttl_ms) when it
 * is free or already token's, in one script: 1 taken while free, 0 ours and renewed,
 * -EBUSY another daemon's (its value in holder), -EPROTO a Redis error (its text in
 * holder), -EIO the connection failed (the caller drops c). */
int tfs_store_lease_take(redisContext *c, const char *token, const char *who, int ttl_ms,
			 char *holder, size_t hsize);
/* Takes the lease for token only while its value is still exactly old (a holder found
 * dead): 0 taken, -EBUSY it changed meanwhile, -EPROTO, -EIO. */
int tfs_store_lease_steal(redisContext *c, const char *old, const char *token, const char *who,
			  int ttl_ms);
/* Deletes the lease if it is token's: 1 deleted, 0 not ours (or gone), -EPROTO, -EIO. */
int tfs_store_lease_drop(redisContext *c, const char *token);

#endif
