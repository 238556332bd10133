/* Connections to Redis, one per thread, reconnected on demand (conn.c) */
#ifndef TFS_CONN_H
#define TFS_CONN_H

#include <hiredis/hiredis.h>

/* The calling thread's connection, or NULL while Redis is unreachable (logged once) or
 * another daemon holds this node's lease (tfs_d.lease_lost, lease.h). */
redisContext *tfs_conn_get(void);
/* Runs a printf-style command (hiredis format) on the thread's connection, after
 * waiting for the write-behind queue (tfs_writer_sync), so what it reads includes this
 * node's own writes. NULL on failure with *rc = -EIO (Redis down: the connection is
 * dropped, redis_down set), -EPROTO (an error reply, logged) or -ENOMEM. */
redisReply *tfs_conn_cmdf(int *rc, const char *fmt, ...);
/* tfs_conn_cmdf without that wait: for reads that do not depend on this node's writes
 * (popping the lifecycle queue). */
redisReply *tfs_conn_cmdf_unordered(int *rc, const char *fmt, ...);
/* An already formatted command (RESP), unordered, with tfs_conn_cmdf's errors. */
redisReply *tfs_conn_run(int *rc, const char *cmd, size_t len);
void tfs_conn_close_thread(void);
/* Records that Redis is unreachable (logged once a second); the queue thread resyncs. */
void tfs_conn_mark_down(const char *why);
/* Counts the failures so far: a connection made before the last one is suspect. */
unsigned tfs_conn_epoch(void);
/* 0 while Redis is reachable as far as the daemon knows, else -EIO: metadata changes
 * check it before changing anything, as their Redis writes are no longer synchronous. */
int tfs_conn_ok(void);

#endif
