/* Redis Sentinel (sentinel.h): a group of sentinels watches a primary and its replicas and
 * promotes a replica when the primary dies. A client never keeps an address: each
 * connection asks the sentinels which server is the primary now, so a connection remade
 * after a failure follows a failover by itself. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sentinel.h"
#include "strutil.h"

#define SENTINEL_PORT 26379
/* A URL longer than every field together is refused before it is looked at. */
#define SENTINEL_URL_MAX 4096

/* The sentinel that answered last: asked first next time, so that a dead one costs a
 * failed connection once, not at every connection. A hint only. */
static unsigned first_sentinel;

static int name_ok(const char *s, size_t n)
{
	if (n == 0 || n > TFS_MASTER_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", s[i]))
			return 0;
	return 1;
}

/* One "host[:port]" of len bytes at p into a. */
static int parse_addr(const char *p, size_t len, struct tfs_sentinel_addr *a, char *err,
		      size_t errlen)
{
	const char *colon = memchr(p, ':', len);
	size_t hl = colon ? (size_t)(colon - p) : len;
	uint64_t v;

	if (hl == 0)
		return tfs_errf(err, errlen, -EINVAL, "a sentinel's address has no host");
	if (hl >= sizeof(a->host))
		return tfs_errf(err, errlen, -EINVAL, "a sentinel's host is longer than %zu bytes",
				sizeof(a->host) - 1);
	for (size_t i = 0; i < hl; i++)
		if ((unsigned char)p[i] <= ' ' || (unsigned char)p[i] >= 0x7f || p[i] == '@' ||
		    p[i] == '[' || p[i] == ']')
			return tfs_errf(err, errlen, -EINVAL, "a sentinel's host must be a name "
					"or an IPv4 address");
	memcpy(a->host, p, hl);
	a->host[hl] = '\0';
	a->port = SENTINEL_PORT;
	if (colon) {
		if (tfs_parse_u64(colon + 1, len - hl - 1, &v) || v == 0 || v > 65535)
			return tfs_errf(err, errlen, -EINVAL, "a sentinel's port must be 1..65535");
		a->port = (int)v;
	}
	return 0;
}

int tfs_sentinel_url_parse(const char *s, struct tfs_redis_url *u, char *err, size_t errlen)
{
	const char *slash, *at, *p, *q, *name;
	size_t total = strnlen(s, SENTINEL_URL_MAX + 1), nl;
	uint64_t v;
	int rc;

	if (total > SENTINEL_URL_MAX)
		return tfs_errf(err, errlen, -EINVAL, "sentinel URL longer than %d bytes",
				SENTINEL_URL_MAX);
	slash = strchr(s, '/');
	if (!slash)
		return tfs_errf(err, errlen, -EINVAL, "sentinel URL needs the master's name: "
				"sentinel://host:port,host:port/mastername");
	/* The last '@' before the path, as redis:// takes it: a password may hold one. */
	at = memrchr(s, '@', (size_t)(slash - s));
	p = s;
	if (at) {
		const char *colon = memchr(s, ':', (size_t)(at - s));
		size_t ul = colon ? (size_t)(colon - s) : (size_t)(at - s);
		size_t pl = colon ? (size_t)(at - colon - 1) : 0;

		if (ul >= sizeof(u->user) || pl >= sizeof(u->password))
			return tfs_errf(err, errlen, -EINVAL, "user or password too long");
		memcpy(u->user, s, ul);
		memcpy(u->password, colon ? colon + 1 : s, pl);
		p = at + 1;
	}
	while (p < slash) {
		const char *comma = memchr(p, ',', (size_t)(slash - p));
		const char *end = comma ? comma : slash;

		if (u->nsentinels == TFS_SENTINELS_MAX)
			return tfs_errf(err, errlen, -EINVAL, "more than %d sentinels",
					TFS_SENTINELS_MAX);
		if ((rc = parse_addr(p, (size_t)(end - p), &u->sentinel[u->nsentinels], err,
				     errlen)))
			return rc;
		u->nsentinels++;
		if (comma && comma + 1 == slash)
			return tfs_errf(err, errlen, -EINVAL, "a sentinel's address has no host");
		p = comma ? comma + 1 : slash;
	}
	if (u->nsentinels == 0)
		return tfs_errf(err, errlen, -EINVAL, "sentinel URL names no sentinel: "
				"sentinel://host:port/mastername");
	name = slash + 1;
	q = strchr(name, '?');
	nl = q ? (size_t)(q - name) : strlen(name);
	if (!name_ok(name, nl))
		return tfs_errf(err, errlen, -EINVAL, "the master's name must be 1 to %d bytes of "
				"letters, digits, '.', '_' and '-'", TFS_MASTER_NAME_MAX);
	memcpy(u->master, name, nl);
	u->master[nl] = '\0';
	if (q) {
		if (strncmp(q, "?db=", 4) || tfs_parse_u64(q + 4, strlen(q + 4), &v) || v > 1000000)
			return tfs_errf(err, errlen, -EINVAL, "sentinel URL option must be ?db=N");
		u->db = (int)v;
	}
	return 0;
}

int tfs_info_field(const char *info, size_t len, const char *name, char *out, size_t size)
{
	size_t nl = strlen(name);
	const char *p = info, *end = info + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *le = eol ? eol : end;

		if (le > p && le[-1] == '\r')
			le--;
		if ((size_t)(le - p) > nl && memcmp(p, name, nl) == 0 && p[nl] == ':') {
			size_t vl = (size_t)(le - p) - nl - 1;

			if (vl >= size)
				return -ENAMETOOLONG;
			memcpy(out, p + nl + 1, vl);
			out[vl] = '\0';
			return 0;
		}
		p = eol ? eol + 1 : end;
	}
	return -ENOENT;
}

int tfs_redis_run_id(redisContext *c, char *out, size_t size)
{
	redisReply *r = redisCommand(c, "INFO server");
	int rc = -EIO;

	if (r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS))
		rc = tfs_info_field(r->str, r->len, "run_id", out, size) ? -EIO : 0;
	freeReplyObject(r);
	return rc;
}

/* Asks sentinel i where master is: 0 with host and port set, -ENXIO (it knows no such
 * master), else -ECONNREFUSED/-EIO/-EPROTO with the reason in why. */
static int ask(const struct tfs_redis_url *u, int i, struct timeval tv, char *host,
	       size_t hsize, int *port, char *why, size_t wsize)
{
	const struct tfs_sentinel_addr *s = &u->sentinel[i];
	const char *argv[3] = { "SENTINEL", "get-master-addr-by-name", u->master };
	redisContext *c = redisConnectWithTimeout(s->host, s->port, tv);
	redisReply *r = NULL;
	uint64_t v;
	int rc = -EPROTO;

	if (!c || c->err) {
		snprintf(why, wsize, "sentinel %.200s:%d: %s", s->host, s->port,
			 c ? c->errstr : "out of memory");
		rc = -ECONNREFUSED;
		goto out;
	}
	redisSetTimeout(c, tv);
	for (int tries = 0; tries < 2; tries++) {
		r = redisCommandArgv(c, 3, argv, NULL);
		/* Sentinels with a password of their own ("requirepass" in sentinel.conf) are
		 * logged into with the primary's credentials. */
		if (tries || !r || r->type != REDIS_REPLY_ERROR || strncmp(r->str, "NOAUTH", 6) ||
		    !u->password[0])
			break;
		freeReplyObject(r);
		{
			const char *av[3] = { "AUTH", u->user[0] ? u->user : u->password,
					      u->password };
			r = redisCommandArgv(c, u->user[0] ? 3 : 2, av, NULL);
		}
		if (!r || r->type == REDIS_REPLY_ERROR)
			break;
		freeReplyObject(r);
	}
	if (!r) {
		snprintf(why, wsize, "sentinel %.200s:%d: %s", s->host, s->port, c->errstr);
		rc = -EIO;
	} else if (r->type == REDIS_REPLY_ERROR) {
		snprintf(why, wsize, "sentinel %.200s:%d: %s", s->host, s->port, r->str);
	} else if (r->type == REDIS_REPLY_NIL) {
		rc = -ENXIO;
	} else if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		   r->element[0]->type != REDIS_REPLY_STRING ||
		   r->element[1]->type != REDIS_REPLY_STRING || r->element[0]->len == 0 ||
		   r->element[0]->len >= hsize ||
		   tfs_parse_u64(r->element[1]->str, r->element[1]->len, &v) || v == 0 ||
		   v > 65535) {
		snprintf(why, wsize, "sentinel %.200s:%d: an answer that is not an address", s->host,
			 s->port);
	} else {
		memcpy(host, r->element[0]->str, r->element[0]->len);
		host[r->element[0]->len] = '\0';
		*port = (int)v;
		rc = 0;
	}
out:
	freeReplyObject(r);
	if (c)
		redisFree(c);
	return rc;
}

/* 0 when c's server says it is a primary; -EAGAIN (a replica: a failover under way, or a
 * demoted primary a sentinel still names) or -EIO with the reason in why. */
static int check_primary(redisContext *c, const char *host, int port, char *why,
			 size_t wsize)
{
	redisReply *r = redisCommand(c, "ROLE");
	int rc = 0;

	if (!r) {
		snprintf(why, wsize, "%.200s:%d: %s", host, port, c->errstr);
		return -EIO;
	}
	/* An ACL user without ROLE takes the sentinels' word: a write to a replica still
	 * fails (READONLY) and brings the next connection. */
	if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOPERM", 6) == 0)
		rc = 0;
	else if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
		 (r->element[0]->type != REDIS_REPLY_STRING &&
		  r->element[0]->type != REDIS_REPLY_STATUS) ||
		 strcmp(r->element[0]->str, "master")) {
		snprintf(why, wsize, "%.200s:%d, which the sentinels name, is not a primary", host,
			 port);
		rc = -EAGAIN;
	}
	freeReplyObject(r);
	return rc;
}

redisContext *tfs_sentinel_connect(const struct tfs_redis_url *u, int timeout_ms, int *rc,
				   char *err, size_t errlen)
{
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	struct tfs_redis_url *m = malloc(sizeof(*m));
	unsigned start = __atomic_load_n(&first_sentinel, __ATOMIC_RELAXED);
	int unknown = 0, answered = 0, e, port = 0, n = u->nsentinels;
	redisContext *c = NULL;
	char why[384] = "";

	if (!m) {
		*rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	*rc = -ECONNREFUSED;
	for (int k = 0; k < n; k++) {
		int i = (int)((start + (unsigned)k) % (unsigned)n);

		*m = *u;
		m->nsentinels = 0;
		e = ask(u, i, tv, m->host, sizeof(m->host), &port, why, sizeof(why));
		if (e == -ENXIO)
			unknown++;
		if (e)
			continue;
		answered++;
		m->port = port;
		c = tfs_redis_connect(m, timeout_ms, &e, why, sizeof(why));
		if (!c) {
			*rc = e;
			/* The primary answered and refused us: another sentinel will not change
			 * that. */
			if (e == -EACCES || e == -EINVAL) {
				snprintf(err, errlen, "%s", why);
				goto out;
			}
			continue;
		}
		if ((e = check_primary(c, m->host, m->port, why, sizeof(why)))) {
			redisFree(c);
			c = NULL;
			*rc = e == -EAGAIN ? -ECONNREFUSED : e;
			continue;
		}
		__atomic_store_n(&first_sentinel, (unsigned)i, __ATOMIC_RELAXED);
		*rc = 0;
		goto out;
	}
	if (unknown && !answered) {
		*rc = -ENXIO;
		snprintf(err, errlen, "no sentinel knows a master named '%s' (%d asked, %d "
			 "answered that they do not)", u->master, n, unknown);
	} else if (!answered) {
		snprintf(err, errlen, "no sentinel of master '%s' answers (%s)", u->master, why);
	} else {
		snprintf(err, errlen, "Redis primary of '%s' unreachable: %s", u->master, why);
	}
out:
	explicit_bzero(m, sizeof(*m));
	free(m);
	return c;
}
