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

#endif
