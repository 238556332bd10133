/* Write-behind of Redis records. A FUSE operation changes the daemon's memory (which is
 * what it serves) and queues the matching Redis writes here; they are sent in the order
 * they were queued, pipelined on a connection of their own, by one sender at a time (the
 * writer's thread, or a caller waiting for a reply who found nobody sending), and the
 * operation returns without waiting for Redis. Waiting a round trip per write under the namespace
 * lock is what capped create -> shape -> unlink at about 1,000/s.
 *
 * Coherence: every synchronous call of the daemon (conn.c) first waits for what is
 * queued (tfs_writer_sync), so the daemon never reads Redis behind its own writes; fsync and
 * fsyncdir wait too, and a queue reply is sent after the writes it reports. The one
 * connection is also the one that Redis tracks for the directory cache, which sets it up
 * through the writer's hook (dircache.c), with NOLOOP: this node's own writes do not
 * invalidate what it just cached.
 *
 * Wake-ups of the writer cost the lifecycle queue's worker more than building its writes:
 * the writes and the reply of one queue command go as one group, and the claims of the
 * creates popped together are sent at once and awaited one by one (tfs_writer_sendf). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "store/conn.h"
#include "store/writer.h"
#include "store/writer_items.h"
#include "log.h"

#define BATCH_MAX 512
/* The bound of the queue (entries) unless TENSORFS_WRITE_QUEUE_MAX says otherwise: with
 * writes coalesced per key, only that many distinct records changed while Redis is away
 * reach it. */
#define QUEUE_MAX_DEFAULT 262144
/* An atomic group (tfs_writer_group_begin(1)) goes as MULTI ... EXEC in one batch: the
 * batch may run this far past BATCH_MAX to take a group whole. */
#define TX_SLACK 256

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work, done_cv;
	struct wb_item *head, **tail;
	uint64_t queued, done;       /* items queued / answered (or dropped) so far */
	uint64_t max;                /* the bound of queued - done (TENSORFS_WRITE_QUEUE_MAX) */
	uint64_t drops;              /* times the queue was dropped for the bound */
	uint64_t dropped;            /* writes dropped since the last tfs_writer_repaired */
	int drop_logged;
	int running, stop, kick;
	/* Someone sends: the writer's thread, or a caller waiting for a reply that found
	 * nobody sending (call_wait). One at a time, as the connection is one. */
	int flushing;
	/* Callers may send (call_wait): cleared by a failed send, set again by the writer's
	 * thread's next good one, so that failures are left to its retries and back-off. */
	int callers_send;
	pthread_t thread;
	redisContext *c;
	const struct tfs_writer_hook *hook;   /* tfs_writer_set_hook's */
	unsigned epoch;              /* tfs_conn_epoch() when c was made */
} wb = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.done_cv = PTHREAD_COND_INITIALIZER,
	.tail = &wb.head,
};

/* The calling thread's group (tfs_writer_group_begin): writes held back to be handed to the
 * writer at once. */
static __thread struct {
	int on, atomic;
	struct wb_item *head, **tail;
	int (*last)(void *arg);      /* tfs_writer_group_begin's: queues the group's last write */
	void *last_arg;
	int in_last;                 /* last runs: what it queues stays in the group */
	struct tfs_gmerge merge;     /* an atomic group's writes merged (group_merge.c) */
} grp;

/* A FUSE worker wakes the writer after its reply is sent (tfs_writer_defer_wakes): a wake-up
 * is a futex call, which the request's latency then does not include. */
static __thread int defer_wakes, wake_owed;

/* Caller has released wb.mu. */
static void wake_writer(void)
{
	if (defer_wakes) {
		wake_owed = 1;
		return;
	}
	pthread_cond_signal(&wb.work);
}

static void pay_wake(void)
{
	if (wake_owed) {
		wake_owed = 0;
		pthread_cond_signal(&wb.work);
	}
}

/* Before waiting for the writer: what it is to send may have been queued by another
 * thread whose wake-up is still owed, and which may be waiting for a lock this one
 * holds. So wake it whatever this thread owes. */
static void wake_to_wait(void)
{
	wake_owed = 0;
	pthread_cond_signal(&wb.work);
}

void tfs_writer_wake_now(void)
{
	pay_wake();
}

void tfs_writer_defer_wakes(int on)
{
	defer_wakes = on;
	if (!on)
		pay_wake();
}

static void item_free(struct wb_item *it);

/* Queues it at the tail, or merges it (then frees it): 1 when queued. Caller holds wb.mu. */
static int append_locked(struct wb_item *it)
{
	int mergeable = !it->wait && !it->tx && (it->field || (it->meta && !it->cmd));

	if (mergeable && tfs_coalesce_merge(it)) {
		item_free(it);
		return 0;
	}
	tfs_coalesce_queued(it, mergeable);
	*wb.tail = it;
	wb.tail = &it->next;
	__atomic_add_fetch(&wb.queued, 1, __ATOMIC_RELEASE);
	return 1;
}

static void item_free(struct wb_item *it)
{
	redisFreeCommand(it->cmd);
	free(it->field);
	free(it->meta);
	free(it);
}

/* cmd of a tfs_writer_save write, from what was queued. 0 or -ENOMEM. */
static int item_format(struct wb_item *it)
{
	const char *argv[2 + 2 * TFS_META_NFIELDS];
	size_t len[2 + 2 * TFS_META_NFIELDS];
	struct tfs_meta_fields f;
	int argc = 0;

	if (it->cmd)
		return 0;
	if (!it->meta) {
		it->len = redisFormatCommand(&it->cmd, "DEL %s", it->key);
	} else {
		tfs_meta_to_fields(it->meta, &f);
		argv[argc] = "HSET"; len[argc++] = 4;
		argv[argc] = it->key; len[argc++] = strlen(it->key);
		for (int i = 0; i < f.n; i++) {
			argv[argc] = f.field[i]; len[argc++] = strlen(f.field[i]);
			argv[argc] = f.value[i]; len[argc++] = f.len[i];
		}
		it->len = redisFormatCommandArgv(&it->cmd, argc, argv, len);
	}
	if (it->len < 0) {
		it->cmd = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Without the writer thread (before the daemon forks, at the end): runs it at once on the
 * calling thread's connection. */
static void run_now(struct wb_item *it, int *rc)
{
	redisReply *r = NULL;

	if ((*rc = item_format(it)) == 0)
		r = tfs_conn_run(rc, it->cmd, (size_t)it->len);

	if (it->wait) {
		it->wait->reply = r;
		it->wait->rc = *rc;
		it->wait->done = 1;
	} else {
		freeReplyObject(r);
	}
	item_free(it);
}

static int bound_locked(void);
static void log_drop(void);
static int flush_batch(void);
static void fail_items(int all);

static struct wb_item *tx_item(const char *word, int tx)
{
	struct wb_item *it = calloc(1, sizeof(*it) + 1);

	if (!it)
		return NULL;
	it->len = redisFormatCommand(&it->cmd, "%s", word);
	if (it->len < 0 || !it->cmd) {
		free(it);
		return NULL;
	}
	it->tx = tx;
	return it;
}

/* The group held (two writes or more) between MULTI and EXEC. 0 or -ENOMEM (then it
 * goes as it is). */
static int tx_wrap(void)
{
	struct wb_item *m = tx_item("MULTI", TX_MULTI), *e = tx_item("EXEC", TX_EXEC), *it;

	if (!m || !e) {
		if (m)
			item_free(m);
		if (e)
			item_free(e);
		return -ENOMEM;
	}
	for (it = grp.head; it; it = it->next)
		it->tx = TX_IN;
	m->next = grp.head;
	grp.head = m;
	*grp.tail = e;
	grp.tail = &e->next;
	return 0;
}

/* Hands what the calling thread's group holds to the writer, in one wake-up. */
static void group_flush(void)
{
	struct wb_item *it;
	int rc;

	/* The group's last write sums up what its commands left for it (the queue's
	 * answers), so it goes with whatever part of the group goes now. */
	if (grp.on && grp.last && !grp.in_last) {
		grp.in_last = 1;
		if ((rc = grp.last(grp.last_arg)))
			tfs_log(LOG_ERR, "a group's last write could not be made (%s)",
				strerror(-rc));
		grp.in_last = 0;
	}
	if (!grp.head)
		return;
	if (grp.atomic && grp.head->next && tx_wrap())
		tfs_log(LOG_ERR, "out of memory: a group of record writes goes unwrapped");
	pthread_mutex_lock(&wb.mu);
	if (!wb.running) {
		pthread_mutex_unlock(&wb.mu);
		while ((it = grp.head)) {
			grp.head = it->next;
			run_now(it, &rc);
		}
	} else {
		struct wb_item *next;
		int dropped;

		for (it = grp.head; it; it = next) {
			next = it->next;
			it->next = NULL;
			append_locked(it);
		}
		dropped = bound_locked();
		pthread_mutex_unlock(&wb.mu);
		if (dropped)
			log_drop();
		/* After the unlock: the writer, woken, does not block at once on wb.mu. */
		wake_writer();
	}
	grp.head = NULL;
	grp.tail = &grp.head;
	tfs_gmerge_reset(&grp.merge);
}

/* Queues cmd (taking it); call, when not NULL, receives the reply. 0 or -ENOMEM, or -EIO
 * for a call while Redis is away (it would only be failed later). */
static int enqueue_item(struct wb_item *it);

static int enqueue(char *cmd, int len, struct tfs_writer_call *call)
{
	struct wb_item *it;

	if (len < 0 || !cmd)
		return -ENOMEM;
	it = calloc(1, sizeof(*it));
	if (!it) {
		redisFreeCommand(cmd);
		return -ENOMEM;
	}
	it->cmd = cmd;
	it->len = len;
	it->wait = call;
	return enqueue_item(it);
}

/* A write the writer formats: HSET of a copy of *m, or DEL when m is NULL. */
static int enqueue_unformatted(const char *key, const struct tfs_meta *m)
{
	size_t klen = strlen(key) + 1;
	struct wb_item *it = calloc(1, sizeof(*it) + klen);

	if (!it || (m && !(it->meta = malloc(sizeof(*m))))) {
		free(it);
		return -ENOMEM;
	}
	if (m)
		*it->meta = *m;
	memcpy(it->key, key, klen);
	return enqueue_item(it);
}

int tfs_writer_save(const char *key, const struct tfs_meta *m, int replace)
{
	int rc = replace ? enqueue_unformatted(key, NULL) : 0;

	return rc ? rc : enqueue_unformatted(key, m);
}

/* Takes it. */
static int enqueue_item(struct wb_item *it)
{
	struct tfs_writer_call *call = it->wait;
	int rc = 0;

	if (!call && grp.on) {
		if (grp.atomic && tfs_gmerge_add(&grp.merge, it)) {
			item_free(it);
			return 0;
		}
		*grp.tail = it;
		grp.tail = &it->next;
		return 0;
	}
	group_flush();          /* what the group holds was decided first: it goes first */
	pthread_mutex_lock(&wb.mu);
	if (!wb.running) {
		pthread_mutex_unlock(&wb.mu);
		run_now(it, &rc);
		return call ? 0 : rc;
	}
	if (call && tfs_redis.down) {
		pthread_mutex_unlock(&wb.mu);
		item_free(it);
		return -EIO;
	}
	if (!append_locked(it)) {
		/* Merged: open/close cycles while Redis is away queue one refcount write per
		 * tensor, not one each. */
		pthread_mutex_unlock(&wb.mu);
		return 0;
	}
	rc = bound_locked();
	pthread_mutex_unlock(&wb.mu);
	if (rc)
		log_drop();
	wake_writer();
	return 0;
}

/* One batch sent by the calling thread, the one sender (wb.flushing); caller holds wb.mu,
 * let go meanwhile. 0, or -EIO: then every waiter still queued gets EIO now, not a second
 * send (a claim's copy answers "taken" by the first) nor a hang under the namespace lock,
 * and callers leave sending, retries and back-off to the writer's thread until its next
 * good batch. *dropped: the bound dropped writes (log_drop once wb.mu is let go). */
static int send_locked(int *dropped)
{
	int rc;

	wb.flushing = 1;
	pthread_mutex_unlock(&wb.mu);
	rc = flush_batch();
	pthread_mutex_lock(&wb.mu);
	wb.flushing = 0;
	if (rc) {
		wb.callers_send = 0;
		fail_items(0);
		*dropped |= bound_locked();
		pthread_cond_broadcast(&wb.done_cv);
	}
	return rc;
}

/* A caller that waits for a reply and finds nobody sending sends the queue itself,
 * its own command included: waking the writer's thread and being woken by it again
 * cost two thread switches, more than the round trip on a VM. */
static redisReply *call_wait(struct tfs_writer_call *call, int *rc)
{
	int woken = 0, failed, dropped = 0;

	pthread_mutex_lock(&wb.mu);
	while (!call->done) {
		if (!wb.flushing && wb.running && !wb.stop && wb.callers_send && wb.head &&
		    !tfs_redis.down) {
			wake_owed = 0;     /* what this thread queued goes now */
			failed = send_locked(&dropped) != 0;
			/* What is left, a failure, or a kick or stop that came while this thread
			 * sent (the writer's thread slept through it), is the writer's to see. */
			if (failed || wb.head || wb.stop || wb.kick)
				pthread_cond_signal(&wb.work);
		} else if (!woken) {
			woken = 1;
			pthread_mutex_unlock(&wb.mu);
			wake_to_wait();
			pthread_mutex_lock(&wb.mu);
		} else {
			pthread_cond_wait(&wb.done_cv, &wb.mu);
		}
	}
	pthread_mutex_unlock(&wb.mu);
	if (dropped)
		log_drop();
	*rc = call->rc;
	return call->reply;
}

int tfs_writer_cmdv(int argc, const char **argv, const size_t *len)
{
	char *cmd = NULL;
	int n = redisFormatCommandArgv(&cmd, argc, argv, len);

	return enqueue(cmd, n, NULL);
}

int tfs_writer_hset1(const char *key, const char *field, const char *value)
{
	size_t klen = strlen(key) + 1;
	struct wb_item *it = calloc(1, sizeof(*it) + klen);

	if (!it)
		return -ENOMEM;
	memcpy(it->key, key, klen);
	it->field = strdup(field);
	it->len = redisFormatCommand(&it->cmd, "HSET %s %s %s", key, field, value);
	if (!it->field || it->len < 0 || !it->cmd) {
		item_free(it);
		return -ENOMEM;
	}
	return enqueue_item(it);
}

int tfs_writer_hset2(const char *key, const char *f1, const char *v1, const char *f2,
		     const char *v2)
{
	size_t klen = strlen(key) + 1;
	struct wb_item *it = calloc(1, sizeof(*it) + klen);

	if (!it)
		return -ENOMEM;
	memcpy(it->key, key, klen);
	/* Its fields as one name: it merges only with a write of the same two. */
	if (asprintf(&it->field, "%s %s", f1, f2) < 0) {
		it->field = NULL;
		item_free(it);
		return -ENOMEM;
	}
	it->len = redisFormatCommand(&it->cmd, "HSET %s %s %s %s %s", key, f1, v1, f2, v2);
	if (it->len < 0 || !it->cmd) {
		item_free(it);
		return -ENOMEM;
	}
	return enqueue_item(it);
}

int tfs_writer_cmdf(const char *fmt, ...)
{
	char *cmd = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = redisvFormatCommand(&cmd, fmt, ap);
	va_end(ap);
	return enqueue(cmd, n, NULL);
}

struct tfs_writer_call *tfs_writer_sendf(int *rc, const char *fmt, ...)
{
	struct tfs_writer_call *w = calloc(1, sizeof(*w));
	char *cmd = NULL;
	va_list ap;
	int n;

	if (!w) {
		*rc = -ENOMEM;
		return NULL;
	}
	va_start(ap, fmt);
	n = redisvFormatCommand(&cmd, fmt, ap);
	va_end(ap);
	*rc = enqueue(cmd, n, w);
	if (*rc) {
		free(w);
		return NULL;
	}
	return w;
}

redisReply *tfs_writer_wait(struct tfs_writer_call *call, int *rc)
{
	redisReply *r = call_wait(call, rc);

	free(call);
	return r;
}

void tfs_writer_group_begin(int atomic, int (*last)(void *arg), void *arg)
{
	if (!grp.tail)
		grp.tail = &grp.head;
	grp.on = 1;
	grp.atomic = atomic;
	tfs_gmerge_reset(&grp.merge);
	grp.last = last;
	grp.last_arg = arg;
}

void tfs_writer_group_end(void)
{
	group_flush();
	grp.on = 0;
	grp.atomic = 0;
	grp.last = NULL;
	grp.last_arg = NULL;
}

int tfs_writer_sync(void)
{
	uint64_t target;

	group_flush();
	if (__atomic_load_n(&wb.done, __ATOMIC_ACQUIRE) ==
	    __atomic_load_n(&wb.queued, __ATOMIC_ACQUIRE))
		return 0;
	wake_to_wait();
	pthread_mutex_lock(&wb.mu);
	target = wb.queued;
	/* While Redis is away the backlog waits for it; callers get EIO, not a hang. */
	while (wb.done < target && !tfs_redis.down)
		pthread_cond_wait(&wb.done_cv, &wb.mu);
	pthread_mutex_unlock(&wb.mu);
	return wb.done < target ? -EIO : 0;
}

redisReply *tfs_writer_read(int *rc, const char *fmt, ...)
{
	redisReply *r;
	va_list ap;

	if (tfs_writer_sync()) {
		*rc = -EIO;
		return NULL;
	}
	va_start(ap, fmt);
	r = tfs_conn_vcmdf(rc, fmt, ap);
	va_end(ap);
	return r;
}

int tfs_writer_read_array(const char *cmd, const char *key, redisReply **out)
{
	redisReply *r;
	int rc;

	r = tfs_writer_read(&rc, "%s %s", cmd, key);
	if (!r)
		return -EIO;
	if (r->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		return -EIO;
	}
	*out = r;
	return 0;
}

static void close_conn(void)
{
	const struct tfs_writer_hook *h = __atomic_load_n(&wb.hook, __ATOMIC_ACQUIRE);

	if (h)
		h->on_close(h->arg);
	redisFree(wb.c);
	wb.c = NULL;
}

void tfs_writer_set_hook(const struct tfs_writer_hook *hook)
{
	__atomic_store_n(&wb.hook, hook, __ATOMIC_RELEASE);
}

static void drop_conn(const char *why)
{
	tfs_conn_mark_down(why);
	close_conn();
}

/* The hook's turn on the connection, before each batch. */
static void run_hook(void)
{
	const struct tfs_writer_hook *h = __atomic_load_n(&wb.hook, __ATOMIC_ACQUIRE);

	if (h && h->on_conn(wb.c, h->arg) < 0)
		drop_conn(wb.c->errstr);
}

/* Sends up to BATCH_MAX items from the head in one pipeline. 0, or -EIO when the
 * connection broke: the items not answered stay queued and go again. */
static int flush_batch(void)
{
	struct wb_item *batch[BATCH_MAX + TX_SLACK], *it;
	redisReply *r;
	char err[256];
	int n = 0, answered = 0, rc = 0, refused, open_tx = -1;

	/* Another thread saw Redis fail since c was made: c may be to a server that is gone;
	 * a fresh one costs less than a failed batch. */
	if (wb.c && wb.epoch != tfs_conn_epoch())
		close_conn();
	/* Another daemon holds this node's lease: what is queued waits (lease.h). */
	if (__atomic_load_n(&tfs_redis.lease_lost, __ATOMIC_ACQUIRE)) {
		tfs_redis.down = 1;
		return -EIO;
	}
	if (!wb.c) {
		wb.epoch = tfs_conn_epoch();
		wb.c = tfs_conn_open(1000, &rc, err, sizeof(err));
		if (!wb.c) {
			tfs_conn_mark_down(err);
			return -EIO;
		}
	}
	run_hook();
	if (!wb.c)
		return -EIO;
	pthread_mutex_lock(&wb.mu);
	for (it = wb.head; it && n < BATCH_MAX + TX_SLACK; it = it->next) {
		if (it->tx == TX_MULTI)
			open_tx = n;
		else if (it->tx == TX_EXEC)
			open_tx = -1;
		else if (n >= BATCH_MAX && open_tx < 0)
			break;
		batch[n++] = it;
	}
	/* An atomic group goes whole or waits for the next batch (unless it alone is larger
	 * than the batch: then it runs on, in order, over two). */
	if (open_tx > 0)
		n = open_tx;
	for (int i = 0; i < n; i++) {
		batch[i]->taken = 1;
		tfs_coalesce_remove(batch[i]);
	}
	open_tx = -1;
	pthread_mutex_unlock(&wb.mu);
	for (int i = 0; i < n; i++) {
		if (item_format(batch[i]) == 0) {
			redisAppendFormattedCommand(wb.c, batch[i]->cmd, batch[i]->len);
			continue;
		}
		/* Out of memory: the record misses this write (said so); a PING in its place
		 * keeps replies and items in step. */
		tfs_log(LOG_ERR, "out of memory formatting a record write of %s", batch[i]->key);
		redisAppendFormattedCommand(wb.c, "*1\r\n$4\r\nPING\r\n", 14);
	}
	for (; answered < n; answered++) {
		it = batch[answered];
		r = NULL;
		if (redisGetReply(wb.c, (void **)&r) != REDIS_OK || !r ||
		    tfs_redis_err_failover(r)) {
			/* A primary turned replica refuses every write: as good as a broken
			 * connection, this item and the rest go again to the new primary. */
			if (r)
				snprintf(err, sizeof(err), "%s", r->str);
			freeReplyObject(r);
			drop_conn(r ? err : wb.c->errstr);
			rc = -EIO;
			/* A group whose EXEC was not answered went with the connection: all of
			 * it goes again. */
			if (open_tx >= 0)
				answered = open_tx;
			break;
		}
		if (it->tx == TX_MULTI)
			open_tx = answered;
		else if (it->tx == TX_EXEC)
			open_tx = -1;
		refused = r->type == REDIS_REPLY_ERROR;
		if (refused)
			tfs_log(LOG_ERR, "Redis refused a record write: %s", r->str);
		if (it->tx == TX_EXEC && r->type == REDIS_REPLY_ARRAY)
			for (size_t e = 0; e < r->elements; e++)
				if (r->element[e]->type == REDIS_REPLY_ERROR)
					tfs_log(LOG_ERR, "Redis refused a record write: %s",
						r->element[e]->str);
		if (it->wait) {
			it->wait->rc = refused ? -EPROTO : 0;
			it->wait->reply = refused ? NULL : r;     /* the waiter frees it */
		}
		if (!it->wait || refused)
			freeReplyObject(r);
	}
	pthread_mutex_lock(&wb.mu);
	for (int i = 0; i < n; i++) {
		it = batch[i];
		/* A waiter whose reply was lost is told EIO rather than replayed: a claim
		 * (HSETNX) sent twice would answer "taken" by its own first copy. */
		if (i >= answered && !it->wait)
			break;
		if (i >= answered) {
			it->wait->rc = -EIO;
			it->wait->reply = NULL;
		}
		wb.head = it->next;
		if (!wb.head)
			wb.tail = &wb.head;
		if (it->wait)
			it->wait->done = 1;
		item_free(it);
		__atomic_add_fetch(&wb.done, 1, __ATOMIC_RELEASE);
	}
	pthread_cond_broadcast(&wb.done_cv);
	pthread_mutex_unlock(&wb.mu);
	return rc;
}

/* Takes out every item a caller waits for (all: every item), answering EIO. Caller holds
 * wb.mu. */
static void fail_items(int all)
{
	struct wb_item **pp = &wb.head, *it;

	while ((it = *pp)) {
		if (!it->wait && !all) {
			pp = &it->next;
			continue;
		}
		*pp = it->next;
		tfs_coalesce_remove(it);
		if (it->wait) {
			it->wait->rc = -EIO;
			it->wait->reply = NULL;
			it->wait->done = 1;
		}
		item_free(it);
		__atomic_add_fetch(&wb.done, 1, __ATOMIC_RELEASE);
	}
	wb.tail = pp;
}

/* Past the bound while Redis is away, every write not in the writer's hands and nobody
 * waits for is dropped: memory stays bounded through an outage of any length, and the
 * resync that follows (tfs_writer_drops) rewrites every record of this node and removes
 * the others. While Redis answers the writer drains the queue; a stall is noticed within
 * the command timeout (1 s), and only then is what waits dropped. Caller holds wb.mu.
 * 1 when the drop is to be logged (by the caller, once it let go of wb.mu). */
static int bound_locked(void)
{
	struct wb_item **pp = &wb.head, *it;
	uint64_t n = 0;
	int log_it;

	if (wb.queued - wb.done <= wb.max || !tfs_redis.down)
		return 0;
	while ((it = *pp)) {
		if (it->taken || it->wait) {
			pp = &it->next;
			continue;
		}
		*pp = it->next;
		tfs_coalesce_remove(it);
		item_free(it);
		n++;
	}
	wb.tail = pp;
	__atomic_add_fetch(&wb.done, n, __ATOMIC_RELEASE);
	log_it = !wb.drop_logged;
	wb.drop_logged = 1;
	wb.dropped += n;
	__atomic_add_fetch(&wb.drops, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&wb.done_cv);
	return log_it;
}

static void log_drop(void)
{
	tfs_log(LOG_WARNING, "record writes: more than %" PRIu64 " queued while Redis is away: "
		"dropped; every record of this node is rewritten once Redis answers", wb.max);
}

uint64_t tfs_writer_drops(void)
{
	return __atomic_load_n(&wb.drops, __ATOMIC_ACQUIRE);
}

void tfs_writer_repaired(void)
{
	uint64_t n;

	pthread_mutex_lock(&wb.mu);
	n = wb.dropped;
	wb.dropped = 0;
	wb.drop_logged = 0;
	pthread_mutex_unlock(&wb.mu);
	if (n)
		tfs_log(LOG_NOTICE, "record writes: the %" PRIu64 " dropped are made good", n);
}

static void *wb_main(void *arg)
{
	int failures = 0, dropped, rc;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&wb.mu);
		while ((!wb.head && !wb.stop && !wb.kick) || wb.flushing)
			pthread_cond_wait(&wb.work, &wb.mu);
		if (!wb.head && !wb.kick) {
			pthread_mutex_unlock(&wb.mu);
			break;
		}
		wb.kick = 0;
		dropped = 0;
		rc = send_locked(&dropped);
		if (rc == 0)
			wb.callers_send = 1;
		pthread_mutex_unlock(&wb.mu);
		if (dropped)
			log_drop();
		if (rc == 0) {
			failures = 0;
			continue;
		}
		/* At unmount, do not hang on a Redis that is gone: a few tries, then drop. */
		if (wb.stop && ++failures >= 5)
			break;
		usleep(100000);
	}
	pthread_mutex_lock(&wb.mu);
	fail_items(1);
	pthread_cond_broadcast(&wb.done_cv);
	pthread_mutex_unlock(&wb.mu);
	if (wb.c)
		redisFree(wb.c);
	wb.c = NULL;
	return NULL;
}

int tfs_writer_start(void)
{
	const char *max = getenv("TENSORFS_WRITE_QUEUE_MAX");
	int rc;

	pthread_mutex_lock(&wb.mu);
	wb.max = max && strtoull(max, NULL, 10) > 0 ? strtoull(max, NULL, 10) :
		QUEUE_MAX_DEFAULT;
	tfs_coalesce_init();
	wb.stop = 0;
	wb.callers_send = 1;
	rc = pthread_create(&wb.thread, NULL, wb_main, NULL);
	if (rc == 0)
		pthread_setname_np(wb.thread, "tfs-redis-wb");
	wb.running = rc == 0;
	pthread_mutex_unlock(&wb.mu);
	return -rc;
}

void tfs_writer_kick(void)
{
	pthread_mutex_lock(&wb.mu);
	wb.kick = 1;
	pthread_cond_signal(&wb.work);
	pthread_mutex_unlock(&wb.mu);
}

void tfs_writer_stop(void)
{
	pthread_mutex_lock(&wb.mu);
	if (!wb.running) {
		pthread_mutex_unlock(&wb.mu);
		return;
	}
	wb.stop = 1;
	pthread_cond_signal(&wb.work);
	pthread_mutex_unlock(&wb.mu);
	pthread_join(wb.thread, NULL);
	pthread_mutex_lock(&wb.mu);
	wb.running = 0;
	pthread_mutex_unlock(&wb.mu);
}
