/* The lifecycle queue's Redis side (redis.c): commands move from the queues onto this
 * node's processing list, leave it with their answer, and a subscription tells the
 * queue thread when a queue changed, and the per-user lists' ACL users. The tfs_qredis_
 * functions are the queue thread's only. */
#ifndef TFS_QUEUE_REDIS_H
#define TFS_QUEUE_REDIS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

/* This node's list of forwarded commands ({<queue>}:node:<node>), set when the queue
 * starts (queue.c). */
extern char tfs_node_queue[512];

/* A command as it waits on the processing list: "<list>\n<command>", or for one larger
 * than queue_max_command "<list>\n!<bytes>\n<its first bytes>", or for one far larger
 * "<list>\n!<about so many bytes>\n@<the key it was set aside under>". */
struct tfs_qentry {
	const char *entry;           /* the whole entry: what acknowledges it */
	size_t elen;
	char list[600];              /* the list it was pushed to */
	const char *json;            /* the command (or its first bytes) */
	size_t len;
	size_t oversize;             /* 0, or the command's size: only its start is here */
	char aside[600];             /* "": none; else the key holding it, unread (len 0) */
};

/* The largest set-aside command whose start the daemon fetches to answer it. */
#define TFS_QREDIS_FETCH_MAX (16u << 20)

/* The processing list's name into buf: {<queue>}:processing:<node>. */
void tfs_qredis_processing(char *buf, size_t size);
/* Splits an entry (pointing into e): 0, or -EBADMSG for one this daemon did not make. */
int tfs_qredis_parse(const char *e, size_t len, struct tfs_qentry *q);
/* Moves up to count commands, and up to max_batch bytes of them (at least one), from the
 * first list that has any (the shared queue, this node's, then each user's, starting one
 * further each call) onto the processing list, in one script, and returns them in queue
 * order: an array of entries (freeReplyObject), empty when every list was. A command over
 * max_cmd bytes is moved as its first bytes only. NULL with *rc as tfs_conn_cmdf's: then
 * whether anything moved is unknown (tfs_qredis_pending tells). */
redisReply *tfs_qredis_grab(int *rc, int count, size_t max_batch, size_t max_cmd);
/* The command set aside for e (e->aside): its LINDEX reply, whose str the caller reads
 * the start of and frees; NULL with *rc -EFBIG (none, or over TFS_QREDIS_FETCH_MAX),
 * -ENOENT (gone) or tfs_conn_cmdf's. */
redisReply *tfs_qredis_aside_head(const struct tfs_qentry *e, int *rc);
/* The oldest n entries of the processing list, oldest last (the order LRANGE gives), and
 * its length in *total; NULL with *rc as tfs_conn_cmdf's. Call after tfs_writer_sync, or
 * answers still queued look unanswered. */
redisReply *tfs_qredis_pending(int *rc, int n, long long *total);
/* The most answers held for one script (tfs_qredis_answers). */
#define TFS_QREDIS_ANSWERS_MAX 64
/* Holds, for the caller's group (the writer's tfs_writer_group_begin), the answer to e:
 * json pushed onto reply (NULL: none; it must pass tfs_store_reply_key_ok) as a list
 * expiring after ttl s (a list without expiry keeps none), when tfs_qredis_answers,
 * the group's last write, takes e off the processing list. Once only: a second answer
 * to an entry answered finds nothing to take and pushes nothing. A command set aside
 * goes with it (its DEL queued in the group now). Copies what it keeps. 0 or -ENOMEM
 * (then e is not answered, and goes again at the next start). */
int tfs_qredis_answer(const struct tfs_qentry *e, const char *reply, const char *json, int ttl);
/* Queues in the caller's group the one script that takes the entries of the answers
 * held (tfs_qredis_answer) off the processing list and pushes their answers, each
 * reply key's in their order: the group's last write (arg unused). 0 or -ENOMEM (the
 * answers are dropped: their commands go again at the next start). */
int tfs_qredis_answers(void *arg);
/* Pushes cmd onto node's list and takes entry off the processing list, in one script, when
 * node's lease is there (else -EHOSTDOWN) and its list holds fewer than max commands (else
 * -EAGAIN); the list expires after ttl s. 0, or -EIO. */
int tfs_qredis_forward(const struct tfs_qentry *e, const char *node, const char *cmd,
		       size_t len, int ttl, long max);
/* Throws away the change notices that came so far (before a grab). */
void tfs_qredis_drain(void);
/* Waits up to ms for a queue list to change (Redis client tracking on the queue's keys,
 * on a connection of its own), or ms when Redis cannot tell (before 6.0, away). */
void tfs_qredis_wait(int ms);
void tfs_qredis_close(void);

/* Makes (or resets) uid's ACL user with password: it may push to its list and pop its
 * replies, nothing else. 0, -EACCES (the daemon may not ACL SETUSER), -EIO. */
int tfs_store_queue_acl(uid_t uid, const char *password);
/* Takes password back from uid's ACL user (at unmount): 0 or tfs_conn_cmdf_unordered's
 * errors. */
int tfs_store_queue_acl_drop(uid_t uid, const char *password);

#endif
