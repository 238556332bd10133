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

#include "daemon.h"
#include "log.h"

static pthread_key_t conn_key;
static pthread_once_t conn_once = PTHREAD_ONCE_INIT;
static int64_t last_complaint;

static void conn_free(void *c)
{
	redisFree(c);
}

static void conn_key_init(void)
{
	pthread_key_create(&conn_key, conn_free);
}

static void mark_down(const char *why)
{
	int64_t now = tfs_now();

	tfs_d.redis_down = 1;
	/* One line per outage second, not one per FUSE request. */
	if (__atomic_exchange_n(&last_complaint, now, __ATOMIC_RELAXED) != now)
		tfs_log(LOG_ERR, "Redis unreachable (%s): metadata calls fail with EIO until it returns",
			why);
}

redisContext *tfs_rl_get(void)
{
	redisContext *c;
	char err[256];
	int rc;

	pthread_once(&conn_once, conn_key_init);
	c = pthread_getspecific(conn_key);
	if (c)
		return c;
	c = tfs_redis_connect(&tfs_d.url, 1000, &rc, err, sizeof(err));
	if (!c) {
		mark_down(err);
		return NULL;
	}
	pthread_setspecific(conn_key, c);
	return c;
}

void tfs_rl_close_thread(void)
{
	redisContext *c;

	pthread_once(&conn_once, conn_key_init);
	c = pthread_getspecific(conn_key);
	if (c) {
		redisFree(c);
		pthread_setspecific(conn_key, NULL);
	}
}

redisReply *tfs_rl_cmd(int *rc, int argc, const char **argv, const size_t *len)
{
	redisContext *c = tfs_rl_get();
	redisReply *r;

	if (!c) {
		*rc = -EIO;
		return NULL;
	}
	r = tfs_redis_cmdv(c, argc, argv, len, rc);
	if (!r && *rc == -EIO) {
		mark_down(c->errstr);
		tfs_rl_close_thread();
	} else if (!r) {
		tfs_log(LOG_ERR, "Redis refused %s", argv[0]);
	}
	return r;
}

redisReply *tfs_rl_cmdf(int *rc, const char *fmt, ...)
{
	redisContext *c = tfs_rl_get();
	redisReply *r;
	va_list ap;

	if (!c) {
		*rc = -EIO;
		return NULL;
	}
	va_start(ap, fmt);
	r = redisvCommand(c, fmt, ap);
	va_end(ap);
	if (!r) {
		*rc = -EIO;
		mark_down(c->errstr);
		tfs_rl_close_thread();
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

int64_t tfs_now(void)
{
	return (int64_t)time(NULL);
}

int tfs_key(char *buf, size_t size, const char *kind, const char *name)
{
	int n = snprintf(buf, size, "%s:%s:%s", tfs_d.o.prefix, kind, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

void tfs_split(const char *name, char *parent, size_t psize, const char **base)
{
	const char *slash = strrchr(name, '/');
	int n = slash ? (int)(slash - name) : 0;

	*base = slash ? slash + 1 : name;
	snprintf(parent, psize, "%.*s", n, name);
}
