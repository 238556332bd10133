#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redisconn.h"
#include "sentinel.h"
#include "strutil.h"

static int url_err(char *err, size_t errlen, const char *why)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", why);
	return -EINVAL;
}

int tfs_url_parse(const char *url, struct tfs_redis_url *u, char *err, size_t errlen)
{
	const char *p, *at, *hostend, *slash;
	uint64_t v;

	memset(u, 0, sizeof(*u));
	if (strncmp(url, "sentinel://", 11) == 0)
		return tfs_sentinel_url_parse(url + 11, u, err, errlen);
	if (strncmp(url, "unix://", 7) == 0) {
		const char *q;
		size_t n;

		p = url + 7;
		at = strchr(p, '@');
		if (at && p[0] != '/') {
			/* unix://[user]:password@/path */
			const char *colon = memchr(p, ':', (size_t)(at - p));

			if (!colon)
				return url_err(err, errlen, "unix URL credentials must be "
					       "[user]:password@");
			if ((size_t)(colon - p) >= sizeof(u->user))
				return url_err(err, errlen, "user too long");
			if ((size_t)(at - colon - 1) >= sizeof(u->password))
				return url_err(err, errlen, "password too long");
			memcpy(u->user, p, (size_t)(colon - p));
			memcpy(u->password, colon + 1, (size_t)(at - colon - 1));
			p = at + 1;
		}
		q = strchr(p, '?');
		n = q ? (size_t)(q - p) : strlen(p);
		if (n == 0 || p[0] != '/')
			return url_err(err, errlen, "unix URL needs an absolute path: unix:///path");
		if (n >= sizeof(u->path))
			return url_err(err, errlen, "unix socket path too long");
		memcpy(u->path, p, n);
		u->is_unix = 1;
		if (q) {
			if (strncmp(q, "?db=", 4) || tfs_parse_u64(q + 4, strlen(q + 4), &v) || v > 1000000)
				return url_err(err, errlen, "unix URL option must be ?db=N");
			u->db = (int)v;
		}
		return 0;
	}
	if (strncmp(url, "redis://", 8) != 0)
		return url_err(err, errlen, "URL must start with redis://, unix:// or sentinel://");
	p = url + 8;
	slash = strchr(p, '/');
	/* The last '@' before the path: a host has none, a password may. */
	at = memrchr(p, '@', slash ? (size_t)(slash - p) : strlen(p));
	if (at) {
		const char *colon = memchr(p, ':', (size_t)(at - p));
		size_t ul = colon ? (size_t)(colon - p) : 0;
		size_t pl = colon ? (size_t)(at - colon - 1) : (size_t)(at - p);

		if (ul >= sizeof(u->user) || pl >= sizeof(u->password))
			return url_err(err, errlen, "user or password too long");
		memcpy(u->user, p, ul);
		memcpy(u->password, colon ? colon + 1 : p, pl);
		p = at + 1;
	}
	hostend = slash ? slash : p + strlen(p);
	{
		const char *colon = memchr(p, ':', (size_t)(hostend - p));
		const char *he = colon ? colon : hostend;

		if (he == p)
			return url_err(err, errlen, "missing host");
		if ((size_t)(he - p) >= sizeof(u->host))
			return url_err(err, errlen, "host too long");
		memcpy(u->host, p, (size_t)(he - p));
		u->port = 6379;
		if (colon) {
			if (tfs_parse_u64(colon + 1, (size_t)(hostend - colon - 1), &v) || v == 0 || v > 65535)
				return url_err(err, errlen, "port must be 1..65535");
			u->port = (int)v;
		}
	}
	if (slash && slash[1]) {
		if (tfs_parse_u64(slash + 1, strlen(slash + 1), &v) || v > 1000000)
			return url_err(err, errlen, "database must be a number: redis://host/3");
		u->db = (int)v;
	}
	return 0;
}

redisContext *tfs_redis_connect(const struct tfs_redis_url *u, int timeout_ms, int *rc,
				char *err, size_t errlen)
{
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	redisContext *c;
	redisReply *r;
	char dbs[16];
	int saved;

	if (u->nsentinels)
		return tfs_sentinel_connect(u, timeout_ms, rc, err, errlen);
	c = u->is_unix ? redisConnectUnixWithTimeout(u->path, tv)
		       : redisConnectWithTimeout(u->host, u->port, tv);
	if (!c) {
		*rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (c->err) {
		saved = c->err == REDIS_ERR_IO && errno ? errno : ECONNREFUSED;
		snprintf(err, errlen, "cannot connect to Redis at %s%s%s%.0d: %s",
			 u->is_unix ? u->path : u->host, u->is_unix ? "" : ":", "",
			 u->is_unix ? 0 : u->port, c->errstr);
		*rc = -saved;
		goto fail;
	}
	redisSetTimeout(c, tv);
	if (u->password[0]) {
		const char *argv[3] = { "AUTH", u->user[0] ? u->user : u->password, u->password };
		r = redisCommandArgv(c, u->user[0] ? 3 : 2, argv, NULL);
		if (!r || r->type == REDIS_REPLY_ERROR) {
			snprintf(err, errlen, "Redis refused the password: %s",
				 r ? r->str : c->errstr);
			*rc = r ? -EACCES : -EIO;
			freeReplyObject(r);
			goto fail;
		}
		freeReplyObject(r);
	}
	if (u->db) {
		snprintf(dbs, sizeof(dbs), "%d", u->db);
		r = redisCommand(c, "SELECT %s", dbs);
		if (!r || r->type == REDIS_REPLY_ERROR) {
			snprintf(err, errlen, "Redis refused SELECT %s: %s", dbs, r ? r->str : c->errstr);
			*rc = r ? -EINVAL : -EIO;
			freeReplyObject(r);
			goto fail;
		}
		freeReplyObject(r);
	}
	r = redisCommand(c, "PING");
	if (!r || r->type == REDIS_REPLY_ERROR) {
		snprintf(err, errlen, "Redis does not answer PING: %s", r ? r->str : c->errstr);
		/* NOAUTH here means a password is needed and none was given. */
		*rc = r && strncmp(r->str, "NOAUTH", 6) == 0 ? -EACCES : -EIO;
		freeReplyObject(r);
		goto fail;
	}
	freeReplyObject(r);
	*rc = 0;
	return c;
fail:
	redisFree(c);
	return NULL;
}

redisReply *tfs_redis_cmdv(redisContext *c, int argc, const char **argv, const size_t *len,
			   int *rc)
{
	redisReply *r = redisCommandArgv(c, argc, argv, len);

	if (!r) {
		*rc = -EIO;
		return NULL;
	}
	if (r->type == REDIS_REPLY_ERROR) {
		*rc = tfs_redis_err_failover(r) ? -EIO : -EPROTO;
		freeReplyObject(r);
		return NULL;
	}
	*rc = 0;
	return r;
}

int tfs_redis_err_failover(const redisReply *r)
{
	return r && r->type == REDIS_REPLY_ERROR && r->str &&
	       (strncmp(r->str, "READONLY", 8) == 0 || strncmp(r->str, "MASTERDOWN", 10) == 0);
}
