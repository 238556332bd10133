/* The lifecycle queue's Redis side (redis.c). */
#ifndef TFS_QUEUE_REDIS_H
#define TFS_QUEUE_REDIS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

/* This node's list of forwarded commands ({<queue>}:node:<node>), set when the queue
 * starts (queue.c). */
extern char tfs_node_queue[512];

/* Pops up to count more from list: the reply, or NULL with *rc as
 * tfs_conn_cmdf_unordered's (the blocking pop of every list is tfs_store_queue_pop_all). */
redisReply *tfs_store_queue_rpop(int *rc, const char *list, int count);
/* 0 when Redis lacks BLMPOP (before 7.0). */
int tfs_store_has_blmpop(void);
/* Pushes json onto reply key key, which must be a list or absent (then made a list that
 * expires after ttl seconds): -EPERM for a key that may not be answered on, else queued
 * (0 or -ENOMEM); a key of another type is left alone, silently. */
int tfs_store_queue_reply(const char *key, const char *json, int ttl);

/* Makes (or resets) uid's ACL user with password: it may push to its list and pop its
 * replies, nothing else. 0, -EACCES (the daemon may not ACL SETUSER), -EIO. */
int tfs_store_queue_acl(uid_t uid, const char *password);
/* Takes password back from uid's ACL user (at unmount): 0 or tfs_conn_cmdf_unordered's
 * errors. */
int tfs_store_queue_acl_drop(uid_t uid, const char *password);
/* Pops (waiting up to 0.5 s) from the shared queue, this node's list and every per-user
 * list: lmpop: BLMPOP ... COUNT count, else BRPOP (one). The reply, or NULL with *rc as
 * tfs_conn_cmdf_unordered's. The queue thread's only (a static buffer). */
redisReply *tfs_store_queue_pop_all(int *rc, int count, int lmpop);

/* Pushes json onto node's list only if node's registry key exists (one script), the list
 * expiring after ttl seconds unless popped: 0, -EHOSTDOWN (node not alive), -EIO.
 * Synchronous: a round trip (bounded by the command timeout). */
int tfs_store_queue_forward_live(const char *node, const char *json, size_t len, int ttl);

#endif
