/* Connections to Redis, one per thread, reconnected on demand (conn.c) */
#ifndef TFS_CONN_H
#define TFS_CONN_H

#include <stdarg.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

#include "redisconn.h"

/* The daemon's link to Redis: the URL set at start-up (main.c), the private
 * redis-server's (private_redis.c), and what every thread reads of its state. */
struct tfs_redis {
	struct tfs_redis_url url;
	volatile int down;           /* a Redis call failed; the queue thread resyncs */
	volatile int lease_lost;     /* another daemon holds this node's lease (lease.h) */
	int moves_pending;           /* a tree move's answer was lost (tensors/rename.c):
	                                metadata changes wait for the resync that settles it */
	pid_t pid;                   /* private redis-server, 0 when --redis was given */
	char rundir[256];            /* the private redis-server's folder */
};
extern struct tfs_redis tfs_redis;

/* A new connection to the daemon's Redis (tfs_redis.url; a sentinel:// URL is resolved
 * anew), for a thread that keeps its own (the writer, the lease, the trackers): the
 * caller owns it. tfs_redis_connect's errors. Through a sentinel group, a primary with
 * another run id than the last one reached counts as a failover (tfs_conn_failovers). */
redisContext *tfs_conn_open(int timeout_ms, int *rc, char *err, size_t errlen);
/* Failovers seen so far: the new primary may lack the last writes the old one took (its
 * replication is asynchronous), so the queue thread rewrites what this node knows. */
unsigned tfs_conn_failovers(void);
/* The calling thread's connection, or NULL while Redis is unreachable (logged once) or
 * another daemon holds this node's lease (tfs_redis.lease_lost, lease.h). */
redisContext *tfs_conn_get(void);
/* Runs a printf-style command (hiredis format) on the thread's connection, at once: for
 * reads that do not depend on this node's writes (popping the lifecycle queue); a read
 * that does is the writer's (tfs_writer_read). NULL on failure with *rc = -EIO (Redis
 * down: the connection is dropped, redis_down set), -EPROTO (an error reply, logged) or
 * -ENOMEM. */
redisReply *tfs_conn_cmdf_unordered(int *rc, const char *fmt, ...);
redisReply *tfs_conn_vcmdf(int *rc, const char *fmt, va_list ap);
/* An already formatted command (RESP), unordered, with tfs_conn_cmdf_unordered's errors. */
redisReply *tfs_conn_run(int *rc, const char *cmd, size_t len);
void tfs_conn_close_thread(void);
/* Records that Redis is unreachable (logged once a second); the queue thread resyncs. */
void tfs_conn_mark_down(const char *why);
/* Counts the failures so far: a connection made before the last one is suspect. */
unsigned tfs_conn_epoch(void);
/* 0 while Redis is reachable as far as the daemon knows and no tree move is unsettled
 * (tfs_d.moves_pending), else -EIO: metadata changes check it before changing anything,
 * as their Redis writes are no longer synchronous. */
int tfs_conn_ok(void);

#endif
