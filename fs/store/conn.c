/* One Redis connection per thread: hiredis contexts are not thread-safe, and FUSE runs
 * many worker threads. A broken connection is dropped and remade on the next call, so the
 * mount stays up while Redis is away and recovers when it returns. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/conn.h"
#include "store/store.h"
#include "log.h"
#include "sentinel.h"
#include "util/clock.h"

struct tfs_redis tfs_redis;

static pthread_key_t conn_key;
static pthread_once_t conn_once = PTHREAD_ONCE_INIT;
static int64_t last_complaint;
/* Bumped at each failure: a thread whose connection is older than the last failure makes
 * a new one before using it, so an idle thread's connection to a Redis that restarted
 * does not fail the first request after recovery. */
static unsigned down_epoch;
static __thread unsigned conn_epoch;

/* The run id of the primary reached last through the sentinels, and the failovers seen. */
static pthread_mutex_t primary_mu = PTHREAD_MUTEX_INITIALIZER;
static char primary_id[64];
static unsigned failovers;

static void note_primary(redisContext *c)
{
	char id[64];

	if (tfs_redis_run_id(c, id, sizeof(id)))
		return;
	pthread_mutex_lock(&primary_mu);
	if (primary_id[0] && strcmp(primary_id, id)) {
		__atomic_add_fetch(&failovers, 1, __ATOMIC_RELEASE);
		tfs_log(LOG_WARNING, "Redis failed over: the primary of '%s' is now %s:%d (run id "
			"%.12s): this node's records are written again on it", tfs_redis.url.master,
			c->tcp.host ? c->tcp.host : "?", c->tcp.port, id);
	}
	snprintf(primary_id, sizeof(primary_id), "%s", id);
	pthread_mutex_unlock(&primary_mu);
}

redisContext *tfs_conn_open(int timeout_ms, int *rc, char *err, size_t errlen)
{
	redisContext *c = tfs_redis_connect(&tfs_redis.url, timeout_ms, rc, err, errlen);

	if (c && tfs_redis.url.nsentinels)
		note_primary(c);
	return c;
}

unsigned tfs_conn_failovers(void)
{
	return __atomic_load_n(&failovers, __ATOMIC_ACQUIRE);
}

static void conn_free(void *c)
{
	redisFree(c);
}

static void conn_key_init(void)
{
	pthread_key_create(&conn_key, conn_free);
}

void tfs_conn_mark_down(const char *why)
{
	int64_t now = tfs_now();

	tfs_redis.down = 1;
	__atomic_add_fetch(&down_epoch, 1, __ATOMIC_RELEASE);
	/* One line per outage second, not one per FUSE request. */
	if (__atomic_exchange_n(&last_complaint, now, __ATOMIC_RELAXED) != now)
		tfs_log(LOG_ERR, "Redis unreachable (%s): metadata calls fail with EIO until it returns",
			why);
}

redisContext *tfs_conn_get(void)
{
	redisContext *c;
	char err[256];
	int rc;

	unsigned epoch = tfs_conn_epoch();

	/* Another daemon holds this node's lease: nothing of the node is written or read in
	 * its name, as though Redis were away (lease.h). */
	if (__atomic_load_n(&tfs_redis.lease_lost, __ATOMIC_ACQUIRE)) {
		tfs_redis.down = 1;
		return NULL;
	}
	pthread_once(&conn_once, conn_key_init);
	c = pthread_getspecific(conn_key);
	if (c && conn_epoch == epoch)
		return c;
	if (c)
		tfs_conn_close_thread();
	conn_epoch = epoch;
	c = tfs_conn_open(1000, &rc, err, sizeof(err));
	if (!c) {
		tfs_conn_mark_down(err);
		return NULL;
	}
	pthread_setspecific(conn_key, c);
	return c;
}

void tfs_conn_close_thread(void)
{
	redisContext *c;

	pthread_once(&conn_once, conn_key_init);
	c = pthread_getspecific(conn_key);
	if (c) {
		redisFree(c);
		pthread_setspecific(conn_key, NULL);
	}
}

unsigned tfs_conn_epoch(void)
{
	return __atomic_load_n(&down_epoch, __ATOMIC_ACQUIRE);
}

int tfs_conn_ok(void)
{
	return tfs_redis.down || __atomic_load_n(&tfs_redis.moves_pending, __ATOMIC_ACQUIRE) ||
	       !tfs_conn_get() ? -EIO : 0;
}

/* Runs cmd (RESP, from redisFormatCommand*) on the thread's connection. */
static redisReply *run(int *rc, const char *cmd, size_t len)
{
	redisContext *c = tfs_conn_get();
	redisReply *r = NULL;

	if (!c) {
		*rc = -EIO;
		return NULL;
	}
	if (redisAppendFormattedCommand(c, cmd, len) != REDIS_OK ||
	    redisGetReply(c, (void **)&r) != REDIS_OK || !r) {
		*rc = -EIO;
		tfs_conn_mark_down(c->errstr);
		tfs_conn_close_thread();
		return NULL;
	}
	if (tfs_redis_err_failover(r)) {
		/* A primary turned replica: the next connection asks the sentinels. */
		*rc = -EIO;
		tfs_conn_mark_down(r->str);
		freeReplyObject(r);
		tfs_conn_close_thread();
		return NULL;
	}
	if (r->type == REDIS_REPLY_ERROR) {
		tfs_log(LOG_ERR, "Redis error: %s", r->str);
		freeReplyObject(r);
		*rc = -EPROTO;
		return NULL;
	}
	*rc = 0;
	return r;
}

redisReply *tfs_conn_run(int *rc, const char *cmd, size_t len)
{
	return run(rc, cmd, len);
}

redisReply *tfs_conn_vcmdf(int *rc, const char *fmt, va_list ap)
{
	char *cmd = NULL;
	int n = redisvFormatCommand(&cmd, fmt, ap);
	redisReply *r;

	if (n < 0) {
		*rc = -ENOMEM;
		return NULL;
	}
	r = run(rc, cmd, (size_t)n);
	redisFreeCommand(cmd);
	return r;
}

redisReply *tfs_conn_cmdf_unordered(int *rc, const char *fmt, ...)
{
	redisReply *r;
	va_list ap;

	va_start(ap, fmt);
	r = tfs_conn_vcmdf(rc, fmt, ap);
	va_end(ap);
	return r;
}
