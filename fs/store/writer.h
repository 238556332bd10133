/* The write-behind of records (writer.c): one thread, one connection, queue order */
#ifndef TFS_WRITER_H
#define TFS_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "meta.h"

/* The queue is bounded and coalesces per key:
 * - HSETs of one key with no other write of that key queued between them are sent as one,
 *   at the place of the first (tfs_writer_hset1 per field, tfs_writer_save per record):
 *   a refcount or record that changes 99,000 times while Redis is away is one write.
 * - At most TENSORFS_WRITE_QUEUE_MAX writes (environment, default 262144) wait in it
 *   while Redis is away (tfs_redis.down: a failed or timed-out call; while it answers,
 *   the writer drains the queue and nothing is dropped). Past that, every queued write that is not in the writer's hands and that nobody
 *   waits for is dropped (logged once until tfs_writer_repaired) and tfs_writer_drops
 *   counts one more: the records of this node are then to be rewritten from memory and
 *   those of its tensors gone removed (the queue thread's resync), since the writes that
 *   would have done it are lost. Writes queued after a drop are kept, in order.
 * Queue a write; 0 or -ENOMEM. Before tfs_writer_start (and after tfs_writer_stop) the write runs
 * at once on the calling thread's connection. Errors Redis returns later are logged. */
int tfs_writer_cmdv(int argc, const char **argv, const size_t *len);
int tfs_writer_cmdf(const char *fmt, ...);
/* Queue HSET key field value, merged with a queued HSET of the same field of key that the
 * writer has not taken yet and that no other write of key follows (the earlier value would
 * never be seen): a write that repeats, such as a refcount, takes one place in the queue
 * however often it changes while Redis is slow or away. 0 or -ENOMEM. */
int tfs_writer_hset1(const char *key, const char *field, const char *value);
/* tfs_writer_hset1 of two fields at once, merged only with a write of the same two fields
 * of key (a directory's mtime and ctime, changed by every entry made or removed in it).
 * For keys that get no whole-record write (tfs_writer_save). 0 or -ENOMEM. */
int tfs_writer_hset2(const char *key, const char *f1, const char *v1, const char *f2,
		     const char *v2);
/* Queue an HSET of the whole record m under key, from a copy of both: the writer
 * formats it, outside the namespace lock. replace: DEL the key first (a stale record's
 * other fields go). 0 or -ENOMEM. */
int tfs_writer_save(const char *key, const struct tfs_meta *m, int replace);
/* While on, the calling thread's writes wake the writer only when it turns it off (or
 * waits for the writer): FUSE workers, around a request, so the reply goes first. */
void tfs_writer_defer_wakes(int on);
/* Wakes the writer now for what the calling thread queued with its wake deferred: for a
 * request whose writes other nodes should find soon (a new tensor's record), where its
 * reply is not to wait for them. */
void tfs_writer_wake_now(void);
/* A command whose reply matters (claiming a name), answered after everything queued
 * before it, in two halves so that several calls share one round trip: queue the command
 * (NULL with *rc -EIO/-ENOMEM), and later wait for its reply (NULL with *rc
 * -EIO/-EPROTO), which frees the call. Every call sent must be waited for. */
struct tfs_writer_call;
struct tfs_writer_call *tfs_writer_sendf(int *rc, const char *fmt, ...);
redisReply *tfs_writer_wait(struct tfs_writer_call *call, int *rc);
/* Holds back the calling thread's writes (tfs_writer_cmdv/cmdf) until the end, to hand them
 * to the writer in one wake-up. A call, tfs_writer_sync or an ordered read in between sends
 * them first, so order holds; end the group before releasing the lock under which the
 * writes were decided, or another thread may read Redis behind them. atomic: the group's
 * writes go as one MULTI/EXEC, all or none (queue commands' writes with the answers that
 * acknowledge them), and none of them is merged with a write outside it. last (NULL:
 * none): called, on the calling thread, each time what the group holds goes to the
 * writer (at tfs_writer_group_end, or before a call or read in between), to queue the
 * group's last write with tfs_writer_cmdv/cmdf (the queue's answers to the commands whose
 * writes go then, in one script); 0, or a negative errno, logged. */
void tfs_writer_group_begin(int atomic, int (*last)(void *arg), void *arg);
void tfs_writer_group_end(void);
/* Waits until everything queued so far is in Redis: 0, or -EIO while Redis is away. */
int tfs_writer_sync(void);
/* An ordered read: a printf-style command (hiredis format) run on the calling thread's
 * connection once everything queued before it is in Redis (tfs_writer_sync), so that what
 * it reads includes this node's own writes. NULL on failure with *rc = -EIO (Redis down,
 * or the queue could not drain), -EPROTO (an error reply, logged) or -ENOMEM. */
redisReply *tfs_writer_read(int *rc, const char *fmt, ...);
/* tfs_writer_read of cmd (HGETALL, HKEYS) of key, whose reply must be an array: 0 with
 * *out (the caller frees it), or -EIO. */
int tfs_writer_read_array(const char *cmd, const char *key, redisReply **out);
/* What runs on the writer's connection c, on the writer's thread with none of its locks
 * held: on_conn before each batch (c fresh or kept: the hook keeps its own state; -EIO
 * when c failed, which drops it), on_close when c is closed. One hook (the directory
 * cache's client tracking); hook stays valid until tfs_writer_stop. */
struct tfs_writer_hook {
	int (*on_conn)(redisContext *c, void *arg);
	void (*on_close)(void *arg);
	void *arg;
};
void tfs_writer_set_hook(const struct tfs_writer_hook *hook);
/* Wakes the writer with nothing queued (so that its hook runs: tracking for a new
 * subscriber). */
void tfs_writer_kick(void);
/* How many times the queue was dropped for its bound since the start (never less). The
 * caller that made good what was dropped (every record rewritten, the stale ones removed)
 * calls tfs_writer_repaired: the next drop is logged again. */
uint64_t tfs_writer_drops(void);
void tfs_writer_repaired(void);
int tfs_writer_start(void);
/* Sends what is queued (a few tries if Redis is away, then drops it) and stops. */
void tfs_writer_stop(void);

#endif
