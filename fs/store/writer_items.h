/* The writer's queued writes (writer.c) and the index that coalesces them (coalesce.c):
 * private to the two. */
#ifndef TFS_WRITER_ITEMS_H
#define TFS_WRITER_ITEMS_H

#include <hiredis/hiredis.h>

#include "meta.h"

/* A command whose reply a caller wants: from tfs_writer_sendf until tfs_writer_wait takes it. */
struct tfs_writer_call {
	redisReply *reply;
	int rc, done;
};

struct wb_item {
	struct wb_item *next;
	char *cmd;                   /* RESP, from redisFormatCommand*: redisFreeCommand */
	int len;
	struct tfs_writer_call *wait;    /* NULL unless a caller wants the reply */
	int taken;                   /* in the writer's batch: no longer changed or dropped */
	int tx;                      /* TX_*: the bounds of an atomic group, or a write in one */
	/* tfs_writer_hset1's: an HSET of one field of key. */
	char *field;
	/* tfs_writer_save's writes, formatted by the writer, not under the namespace lock: cmd is
	 * NULL until then. An HSET of *meta under key, or with meta NULL a DEL of key. */
	struct tfs_meta *meta;
	/* In the coalescing index (an hset1 or a whole-record HSET not taken yet, with no
	 * other write of key queued after it): the next write of the same field of key, or
	 * of the whole record, is merged into it instead of queued (idx_merge). */
	int indexed;
	struct wb_item *inext;       /* the index bucket's chain */
	char key[];
};

/* An item's place in an atomic group (tfs_writer_group_begin(1)): none, inside, or the
 * MULTI and EXEC around it. */
enum { TX_NONE, TX_IN, TX_MULTI, TX_EXEC };

/* The coalescing index: every function is called under the writer's lock. */
/* Makes the index, once; without it (out of memory) nothing is merged. */
void tfs_coalesce_init(void);
/* Merges it into the queued write it replaces: 1 (it is the caller's to free), or 0 when
 * it is to be queued. */
int tfs_coalesce_merge(struct wb_item *it);
/* it, not merged, is queued: indexed when mergeable, else a barrier to the writes of its
 * keys queued before it. */
void tfs_coalesce_queued(struct wb_item *it, int mergeable);
/* it leaves the index (taken by the writer, or dropped). */
void tfs_coalesce_remove(struct wb_item *it);
/* The keys of a formatted command (as redisFormatCommand makes them), each passed to fn:
 * the commands the daemon queues name their key first, but RENAME (two), DEL, UNLINK
 * and EXISTS (all their arguments) and EVAL (after the count). 0, or -1 when cmd cannot
 * be read. */
int tfs_resp_keys(const char *cmd, int len, void (*fn)(const char *key, size_t klen, void *arg),
		  void *arg);

/* Writes merged within one atomic group (group_merge.c): the group goes as one MULTI/EXEC,
 * so a write may join an earlier one of the same kind (a DEL of another key, an HDEL of
 * the same hash) when no write between them touches its key: nothing outside the
 * transaction sees the order. The state of the calling thread's group. */
#define GMERGE_SLOTS 512
struct tfs_gmerge {
	uint64_t hash[GMERGE_SLOTS];     /* a key's hash (0: free slot) */
	int last[GMERGE_SLOTS];          /* the index of the last item that touched it */
	struct wb_item *hdel[GMERGE_SLOTS];  /* that item when it is an HDEL of the key */
	int n, used, off;            /* items noted; slots used; off: no more merging */
	struct wb_item *del;         /* the last DEL of the group, and its index */
	int del_at;
};
/* A group starts. */
void tfs_gmerge_reset(struct tfs_gmerge *g);
/* it is to join the group: 1 when merged into an earlier write of the group (it is the
 * caller's to free), 0 when it is to be appended, as its last item. */
int tfs_gmerge_add(struct tfs_gmerge *g, struct wb_item *it);

#endif
