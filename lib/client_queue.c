/* The Redis path of the client: create / get / delete through the lifecycle queue
 * (docs/contract.md), each command answered on its own reply key. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "client_internal.h"
#include "cmd.h"
#include "redisconn.h"
#include "secret.h"

struct tfs_client {
	pthread_mutex_t lock;
	struct tfs_redis_url url;
	redisContext *ctx;           /* NULL after a broken connection: reconnects */
	int timeout_ms;
	int lease;                   /* seconds; 0: holds last while the process lives */
	char queue[TFS_CMD_STR];
	char node[TFS_NODE_MAX];
};

static int ensure_connected(tfs_client *c)
{
	char err[512];
	int rc;

	if (c->ctx)
		return 0;
	c->ctx = tfs_redis_connect(&c->url, c->timeout_ms, &rc, err, sizeof(err));
	return c->ctx ? 0 : tfs_seterr(rc, "%s", err);
}

/* A client that logs in as a per-user queue's ACL user (u<uid>.<queue>, the name the
 * daemon's --user-queues gives it) pushes to that user's list, <queue>:u:<uid>, and reads
 * its replies under it: the only keys it may touch. Anyone else keeps the shared queue.
 * Redis before 6 has no ACL WHOAMI: the shared queue too. */
static void per_user_queue(tfs_client *c)
{
	const char *argv[2] = { "ACL", "WHOAMI" };
	const char *p, *dot;
	redisReply *r;
	int rc;

	r = tfs_redis_cmdv(c->ctx, 2, argv, NULL, &rc);
	if (!r)
		return;
	p = r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS ? r->str : "";
	dot = strchr(p, '.');
	if (p[0] == 'u' && dot && dot > p + 1 && dot[1] &&
	    strspn(p + 1, "0123456789") == (size_t)(dot - p - 1))
		snprintf(c->queue, sizeof(c->queue), "%s:u:%.*s", dot + 1, (int)(dot - p - 1),
			 p + 1);
	freeReplyObject(r);
}

int tfs_connect(const char *url, int timeout_ms, tfs_client **out)
{
	const char *pw;
	char err[256];
	tfs_client *c;
	int rc;

	if (!url || !out)
		return tfs_seterr(-EINVAL, "tfs_connect: NULL argument");
	c = calloc(1, sizeof(*c));
	if (!c)
		return tfs_seterr(-ENOMEM, "out of memory");
	if (tfs_url_parse(url, &c->url, err, sizeof(err))) {
		rc = tfs_seterr(-EINVAL, "bad Redis URL: %s", err);
		goto fail;
	}
	/* A password kept off command lines: the environment's, for a URL without one. */
	pw = getenv(TFS_PASSWORD_ENV);
	if (!c->url.password[0] && pw && pw[0]) {
		if (strlen(pw) >= sizeof(c->url.password)) {
			rc = tfs_seterr(-EINVAL, "%s: longer than %d bytes", TFS_PASSWORD_ENV,
					TFS_PASSWORD_MAX);
			goto fail;
		}
		strcpy(c->url.password, pw);
	}
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : 5000;
	strcpy(c->queue, "tensor_lifecycle");
	if (gethostname(c->node, sizeof(c->node)) != 0)
		strcpy(c->node, "localhost");
	c->node[sizeof(c->node) - 1] = '\0';
	if ((rc = ensure_connected(c)))
		goto fail;
	per_user_queue(c);
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
fail:
	explicit_bzero(c, sizeof(*c));
	free(c);
	return rc;
}

void tfs_disconnect(tfs_client *c)
{
	if (!c)
		return;
	if (c->ctx)
		redisFree(c->ctx);
	pthread_mutex_destroy(&c->lock);
	explicit_bzero(c->url.password, sizeof(c->url.password));
	free(c);
}

static int set_str(tfs_client *c, char *dst, size_t size, const char *s, const char *what)
{
	if (!c || !s || !s[0] || strlen(s) >= size)
		return tfs_seterr(-EINVAL, "%s: empty or too long", what);
	pthread_mutex_lock(&c->lock);
	strcpy(dst, s);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

int tfs_client_set_queue(tfs_client *c, const char *queue)
{
	return set_str(c, c ? c->queue : NULL, TFS_CMD_STR, queue, "queue key");
}

int tfs_client_set_node(tfs_client *c, const char *node)
{
	return set_str(c, c ? c->node : NULL, TFS_NODE_MAX, node, "node name");
}

int tfs_client_set_lease(tfs_client *c, int seconds)
{
	if (!c || seconds < 0 || seconds > 86400)
		return tfs_seterr(-EINVAL, "tfs_client_set_lease: seconds must be 0 to 86400");
	pthread_mutex_lock(&c->lock);
	c->lease = seconds;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* Command ids are node:pid:seq, seq counted for the whole process: two clients of one
 * process must never send the same id, for ids name the reply keys. */
static uint64_t next_seq;

/* The first of n fresh sequence numbers. */
static uint64_t take_seq(size_t n)
{
	return __atomic_fetch_add(&next_seq, (uint64_t)n, __ATOMIC_RELAXED) + 1;
}

/* Fills what every command carries: holder, node, lease and its id (seq). Called with
 * c->lock held. */
static void prepare(tfs_client *c, struct tfs_cmd *cmd, uint64_t seq)
{
	/* -1: a command that names no holder (a delete of the name). */
	cmd->pid = cmd->pid < 0 ? 0 : getpid();
	snprintf(cmd->node, sizeof(cmd->node), "%s", c->node);
	if (cmd->op == TFS_OP_GET || cmd->op == TFS_OP_RENEW)
		cmd->lease = c->lease;
	snprintf(cmd->id, sizeof(cmd->id), "%s:%d:%llu", c->node, (int)getpid(),
		 (unsigned long long)seq);
}

/* Sends cmd (op, name and arguments filled) and waits for its reply; *m gets the
 * metadata of an ok reply. Called with c->lock held. */
static int roundtrip(tfs_client *c, struct tfs_cmd *cmd, struct tfs_meta *m)
{
	struct timeval tv = { c->timeout_ms / 1000 + 2, (c->timeout_ms % 1000) * 1000 };
	struct timeval tv0 = { c->timeout_ms / 1000, (c->timeout_ms % 1000) * 1000 };
	char secs[32], msg[256] = "", id[TFS_CMD_STR];
	const char *argv[3];
	redisReply *r = NULL;
	char *json = NULL;
	int rc;

	if ((rc = ensure_connected(c)))
		return rc;
	prepare(c, cmd, take_seq(1));
	snprintf(cmd->reply, sizeof(cmd->reply), "%.100s:reply:%.140s", c->queue, cmd->id);
	json = tfs_cmd_build(cmd);
	if (!json)
		return tfs_seterr(-ENOMEM, "out of memory");
	argv[0] = "LPUSH";
	argv[1] = c->queue;
	argv[2] = json;
	r = tfs_redis_cmdv(c->ctx, 3, argv, NULL, &rc);
	if (!r) {
		rc = tfs_seterr(rc, "LPUSH %s failed: %s", c->queue, c->ctx->errstr);
		goto out;
	}
	freeReplyObject(r);
	/* The socket timeout must outlast the BRPOP's own. */
	redisSetTimeout(c->ctx, tv);
	snprintf(secs, sizeof(secs), "%.3f", c->timeout_ms / 1000.0);
	argv[0] = "BRPOP";
	argv[1] = cmd->reply;
	argv[2] = secs;
	r = tfs_redis_cmdv(c->ctx, 3, argv, NULL, &rc);
	if (c->ctx->err == 0)
		redisSetTimeout(c->ctx, tv0);
	if (!r) {
		rc = tfs_seterr(rc, "waiting for the reply on %s failed: %s", cmd->reply,
				c->ctx->errstr);
		goto out;
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[1]->type != REDIS_REPLY_STRING) {
		rc = tfs_seterr(-ETIMEDOUT, "no reply on %s within %d ms: is a tensorfs daemon "
				"serving the queue %s?", cmd->reply, c->timeout_ms, c->queue);
		goto out;
	}
	rc = tfs_reply_parse(r->element[1]->str, r->element[1]->len, m, id, sizeof(id), msg,
			     sizeof(msg));
	if (rc == -EBADMSG)
		rc = tfs_seterr(rc, "malformed reply on %s", cmd->reply);
	else if (rc)
		rc = tfs_seterr(rc, "%s: %s (%s)", cmd->name, msg[0] ? msg : tfs_strerror(rc),
				tfs_errno_name(rc));
	else if (strcmp(id, cmd->id))
		rc = tfs_seterr(-EBADMSG, "reply on %s answers request %s, not %s", cmd->reply, id,
				cmd->id);
out:
	if (rc == -EIO && c->ctx) {
		redisFree(c->ctx);   /* broken: the next call reconnects */
		c->ctx = NULL;
	}
	freeReplyObject(r);
	free(json);
	return rc;
}

/* 0 or -EINVAL with the message set. */
static int name_ok(const char *name)
{
	if (!name || tfs_name_check(name))
		return tfs_seterr(-EINVAL, "bad tensor name \"%s\"", name ? name : "(null)");
	return 0;
}

/* A command for op on a checked name (heap: it holds a 4 KiB name); NULL = no memory. */
static struct tfs_cmd *new_cmd(enum tfs_op op, const char *name)
{
	struct tfs_cmd *cmd;

	cmd = calloc(1, sizeof(*cmd));
	if (!cmd) {
		tfs_seterr(-ENOMEM, "out of memory");
		return NULL;
	}
	cmd->op = op;
	strcpy(cmd->name, name);
	return cmd;
}

static int run(tfs_client *c, struct tfs_cmd *cmd, struct tfs_meta *m)
{
	int rc;

	pthread_mutex_lock(&c->lock);
	rc = roundtrip(c, cmd, m);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int tfs_create(tfs_client *c, const char *name, tfs_dtype dtype, int ndim,
	       const int64_t *shape, int device)
{
	struct tfs_cmd *cmd;
	struct tfs_meta m;
	int rc;

	if (!c || ndim < 0 || ndim > TFS_MAX_DIMS || (ndim && !shape) ||
	    (unsigned)dtype >= TFS_DTYPE_COUNT)
		return tfs_seterr(-EINVAL, "tfs_create: bad argument");
	for (int i = 0; i < ndim; i++)
		if (shape[i] < 0)
			return tfs_seterr(-EINVAL, "tfs_create: negative dimension");
	if ((rc = name_ok(name)))
		return rc;
	if (!(cmd = new_cmd(TFS_OP_CREATE, name)))
		return -ENOMEM;
	cmd->has_dtype = cmd->has_shape = 1;
	cmd->dtype = dtype;
	cmd->shape.ndim = ndim;
	for (int i = 0; i < ndim; i++)
		cmd->shape.dims[i] = (uint64_t)shape[i];
	if (device >= 0 || device == TFS_DEVICE_CPU) {
		cmd->has_device = 1;
		cmd->device = device;
	}
	rc = run(c, cmd, &m);
	free(cmd);
	return rc;
}

int tfs_delete(tfs_client *c, const char *name)
{
	struct tfs_cmd *cmd;
	struct tfs_meta m;
	int rc;

	if (!c)
		return tfs_seterr(-EINVAL, "tfs_delete: NULL client");
	if ((rc = name_ok(name)))
		return rc;
	if (!(cmd = new_cmd(TFS_OP_DELETE, name)))
		return -ENOMEM;
	rc = run(c, cmd, &m);
	if (rc == -ESRCH) {
		/* This process holds none: the name's reference, as documented. The daemon
		 * never does that for a delete that names a holder (a retry must not remove a
		 * name for everyone); a caller asking for it sends a delete without pid. */
		memset(cmd, 0, sizeof(*cmd));
		cmd->op = TFS_OP_DELETE;
		strcpy(cmd->name, name);
		cmd->pid = -1;
		rc = run(c, cmd, &m);
	}
	free(cmd);
	return rc;
}

int tfs_renew(tfs_client *c, const char *name)
{
	struct tfs_cmd *cmd;
	struct tfs_meta m;
	int rc;

	if (!c)
		return tfs_seterr(-EINVAL, "tfs_renew: NULL client");
	if ((rc = name_ok(name)))
		return rc;
	if (!c->lease)
		return tfs_seterr(-EINVAL, "tfs_renew: no lease set (tfs_client_set_lease)");
	if (!(cmd = new_cmd(TFS_OP_RENEW, name)))
		return -ENOMEM;
	rc = run(c, cmd, &m);
	free(cmd);
	return rc;
}

int tfs_get(tfs_client *c, const char *name, tfs_tensor **out)
{
	struct tfs_cmd *cmd;
	struct tfs_meta m;
	char msg[512];
	int rc;

	if (!c || !out)
		return tfs_seterr(-EINVAL, "tfs_get: NULL argument");
	if ((rc = name_ok(name)))
		return rc;
	if (!(cmd = new_cmd(TFS_OP_GET, name)))
		return -ENOMEM;
	rc = run(c, cmd, &m);
	free(cmd);
	if (rc)
		return rc;
	rc = tfs_tensor_from_meta(&m, -1, name, 1, out);
	if (rc) {
		/* Give the hold back, keeping the mapping error for the caller. */
		snprintf(msg, sizeof(msg), "%s", tfs_errmsg());
		tfs_delete(c, name);
		tfs_seterr(rc, "%s", msg);
	}
	return rc;
}

/* ---- Batches: n commands in one LPUSH, their answers on one reply key ---- */

/* The item an answer's id names (prefix "node:pid:", then base..base+n-1), or -1. */
static long batch_index(const char *id, const char *prefix, uint64_t base, size_t n)
{
	size_t pl = strlen(prefix);
	unsigned long long v;
	char *end;

	if (strncmp(id, prefix, pl) || id[pl] < '0' || id[pl] > '9')
		return -1;
	errno = 0;
	v = strtoull(id + pl, &end, 10);
	if (errno || *end || v < base || v - base >= n)
		return -1;
	return (long)(v - base);
}

/* Reads the answers in r (one string, or an array of them) into the items they name.
 * Returns how many items got their first answer. */
static size_t batch_collect(const redisReply *r, const char *prefix, uint64_t base, size_t n,
			    struct tfs_meta *metas, int *rcs, char *done)
{
	char id[TFS_CMD_STR], msg[256];
	struct tfs_meta m;
	size_t got = 0;
	long i;
	int rc;

	if (r->type == REDIS_REPLY_ARRAY) {
		for (size_t k = 0; k < r->elements; k++)
			got += batch_collect(r->element[k], prefix, base, n, metas, rcs, done);
		return got;
	}
	if (r->type != REDIS_REPLY_STRING)
		return 0;
	id[0] = '\0';
	rc = tfs_reply_parse(r->str, r->len, &m, id, sizeof(id), msg, sizeof(msg));
	if (rc == -EBADMSG || (i = batch_index(id, prefix, base, n)) < 0 || done[i])
		return 0;            /* not one of ours (or a repeat): never trusted */
	done[i] = 1;
	rcs[i] = rc;
	if (rc == 0 && metas)
		metas[i] = m;
	return 1;
}

/* Sends the n built commands (json[i], whose ids run from base) in one LPUSH and waits,
 * until the client's timeout from now, for their answers on reply. Items not answered in
 * time get -ETIMEDOUT. Returns 0 (each item's result in rcs) or the negative errno of a
 * send or connection failure, which every unanswered item gets too. c->lock held. */
static int batch_roundtrip(tfs_client *c, char **json, size_t n, const char *reply,
			   uint64_t base, struct tfs_meta *metas, int *rcs)
{
	struct timeval tv0 = { c->timeout_ms / 1000, (c->timeout_ms % 1000) * 1000 };
	char prefix[TFS_NODE_MAX + 32], secs[32], count[32], *done = NULL;
	const char **argv = NULL, *a[3];
	uint64_t deadline;
	struct timeval now;
	redisReply *r;
	size_t got = 0;
	int rc = 0, no_count = 0;

	argv = malloc((n + 2) * sizeof(*argv));
	done = calloc(n, 1);
	if (!argv || !done) {
		rc = tfs_seterr(-ENOMEM, "out of memory");
		goto out;
	}
	snprintf(prefix, sizeof(prefix), "%s:%d:", c->node, (int)getpid());
	argv[0] = "LPUSH";
	argv[1] = c->queue;
	for (size_t i = 0; i < n; i++)
		argv[i + 2] = json[i];     /* pushed in order: the daemon takes json[0] first */
	r = tfs_redis_cmdv(c->ctx, (int)n + 2, argv, NULL, &rc);
	if (!r) {
		rc = tfs_seterr(rc, "LPUSH %s failed: %s", c->queue, c->ctx->errstr);
		goto out;
	}
	freeReplyObject(r);
	gettimeofday(&now, NULL);
	deadline = (uint64_t)now.tv_sec * 1000 + now.tv_usec / 1000 + (uint64_t)c->timeout_ms;
	while (got < n) {
		uint64_t ms;
		struct timeval tv;

		gettimeofday(&now, NULL);
		ms = (uint64_t)now.tv_sec * 1000 + now.tv_usec / 1000;
		if (ms >= deadline)
			break;
		ms = deadline - ms;
		/* The socket timeout must outlast the BRPOP's own. */
		tv.tv_sec = (time_t)(ms / 1000 + 2);
		tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
		redisSetTimeout(c->ctx, tv);
		snprintf(secs, sizeof(secs), "%.3f", ms / 1000.0);
		a[0] = "BRPOP";
		a[1] = reply;
		a[2] = secs;
		r = tfs_redis_cmdv(c->ctx, 3, a, NULL, &rc);
		if (c->ctx->err == 0)
			redisSetTimeout(c->ctx, tv0);
		if (!r) {
			rc = tfs_seterr(rc, "waiting for replies on %s failed: %s", reply,
					c->ctx->errstr);
			goto out;
		}
		if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
			freeReplyObject(r);
			break;            /* nil: the time is up */
		}
		got += batch_collect(r->element[1], prefix, base, n, metas, rcs, done);
		freeReplyObject(r);
		if (got == n || no_count)
			continue;
		/* What else has come, without waiting: one more round trip for many (Redis
		 * 6.2 on; before, an error, and each answer takes its own BRPOP). */
		snprintf(count, sizeof(count), "%zu", n - got);
		a[0] = "RPOP";
		a[2] = count;
		r = tfs_redis_cmdv(c->ctx, 3, a, NULL, &rc);
		if (!r && rc == -EPROTO) {
			no_count = 1;
			rc = 0;
			continue;
		}
		if (!r) {
			rc = tfs_seterr(rc, "reading replies on %s failed: %s", reply,
					c->ctx->errstr);
			goto out;
		}
		got += batch_collect(r, prefix, base, n, metas, rcs, done);
		freeReplyObject(r);
	}
out:
	for (size_t i = 0; done && i < n; i++)
		if (!done[i])
			rcs[i] = rc ? rc : -ETIMEDOUT;
	if (rc == -EIO && c->ctx) {
		redisFree(c->ctx);   /* broken: the next call reconnects */
		c->ctx = NULL;
	}
	if (!done)
		for (size_t i = 0; i < n; i++)
			rcs[i] = rc;
	free(done);
	free(argv);
	return rc;
}

/* Builds, sends and collects a batch of n commands that fill(i, cmd) describes (op and
 * arguments; the name checked). metas may be NULL. The first failing item's error is
 * returned, with its message set. */
static int batch_run(tfs_client *c, size_t n, int (*fill)(const void *, size_t, struct tfs_cmd *),
		     const void *arg, struct tfs_meta *metas, int *rcs)
{
	char reply[TFS_CMD_STR], **json;
	struct tfs_cmd *cmd;
	uint64_t base;
	int rc = 0;

	json = calloc(n, sizeof(*json));
	cmd = malloc(sizeof(*cmd));
	if (!json || !cmd) {
		free(json);
		free(cmd);
		return tfs_seterr(-ENOMEM, "out of memory");
	}
	pthread_mutex_lock(&c->lock);
	if ((rc = ensure_connected(c)))
		goto out;
	base = take_seq(n);
	for (size_t i = 0; i < n; i++) {
		memset(cmd, 0, sizeof(*cmd));
		fill(arg, i, cmd);
		prepare(c, cmd, base + i);
		if (i == 0)
			/* One key for the batch, named by its first id: no answer of an earlier
			 * batch that came too late lands on it. */
			snprintf(reply, sizeof(reply), "%.100s:reply:%.140s", c->queue, cmd->id);
		snprintf(cmd->reply, sizeof(cmd->reply), "%s", reply);
		if (!(json[i] = tfs_cmd_build(cmd))) {
			rc = tfs_seterr(-ENOMEM, "out of memory");
			goto out;
		}
	}
	rc = batch_roundtrip(c, json, n, reply, base, metas, rcs);
	if (rc)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!rcs[i])
			continue;
		fill(arg, i, cmd);
		rc = tfs_seterr(rcs[i], "%s: %s (%s); %zu of %zu items", cmd->name,
				rcs[i] == -ETIMEDOUT ? "no reply in time" : tfs_strerror(rcs[i]),
				tfs_errno_name(rcs[i]), i + 1, n);
		break;
	}
out:
	pthread_mutex_unlock(&c->lock);
	for (size_t i = 0; i < n; i++)
		free(json[i]);
	free(json);
	free(cmd);
	return rc;
}

static int fill_create(const void *arg, size_t i, struct tfs_cmd *cmd)
{
	const struct tfs_create_req *q = (const struct tfs_create_req *)arg + i;

	cmd->op = TFS_OP_CREATE;
	strcpy(cmd->name, q->name);
	cmd->has_dtype = cmd->has_shape = 1;
	cmd->dtype = q->dtype;
	cmd->shape.ndim = q->ndim;
	for (int d = 0; d < q->ndim; d++)
		cmd->shape.dims[d] = (uint64_t)q->shape[d];
	if (q->device >= 0) {
		cmd->has_device = 1;
		cmd->device = q->device;
	}
	return 0;
}

static int fill_unlink(const void *arg, size_t i, struct tfs_cmd *cmd)
{
	cmd->op = TFS_OP_DELETE;
	strcpy(cmd->name, ((const char *const *)arg)[i]);
	cmd->pid = -1;               /* the name's reference, as rm */
	return 0;
}

int tfs_create_many(tfs_client *c, size_t n, const struct tfs_create_req *reqs, int *rcs,
		    tfs_tensor **out)
{
	struct tfs_meta *metas = NULL;
	int *own = NULL, rc;

	if (!c || !reqs || n == 0 || n > TFS_BATCH_MAX)
		return tfs_seterr(-EINVAL, "tfs_create_many: NULL argument or n not 1 to %d",
				  TFS_BATCH_MAX);
	/* Every item is checked before anything is sent: a bad one sends none. */
	for (size_t i = 0; i < n; i++) {
		const struct tfs_create_req *q = &reqs[i];

		if (q->ndim < 0 || q->ndim > TFS_MAX_DIMS || (q->ndim && !q->shape) ||
		    (unsigned)q->dtype >= TFS_DTYPE_COUNT)
			return tfs_seterr(-EINVAL, "tfs_create_many: item %zu: bad argument", i);
		for (int d = 0; d < q->ndim; d++)
			if (q->shape[d] < 0)
				return tfs_seterr(-EINVAL, "tfs_create_many: item %zu: negative "
						  "dimension", i);
		if ((rc = name_ok(q->name)))
			return rc;
	}
	if (out)
		for (size_t i = 0; i < n; i++)
			out[i] = NULL;
	if (!rcs && !(rcs = own = malloc(n * sizeof(*rcs))))
		return tfs_seterr(-ENOMEM, "out of memory");
	if (out && !(metas = calloc(n, sizeof(*metas)))) {
		free(own);
		return tfs_seterr(-ENOMEM, "out of memory");
	}
	rc = batch_run(c, n, fill_create, reqs, metas, rcs);
	for (size_t i = 0; out && i < n; i++) {
		if (rcs[i])
			continue;
		/* The name's reference keeps it; a mapping that fails leaves it made. */
		rcs[i] = tfs_tensor_from_meta(&metas[i], -1, reqs[i].name, 1, &out[i]);
		if (rcs[i] && !rc)
			rc = rcs[i];
	}
	free(metas);
	free(own);
	return rc;
}

int tfs_unlink_many(tfs_client *c, size_t n, const char *const *names, int *rcs)
{
	int *own = NULL, rc;

	if (!c || !names || n == 0 || n > TFS_BATCH_MAX)
		return tfs_seterr(-EINVAL, "tfs_unlink_many: NULL argument or n not 1 to %d",
				  TFS_BATCH_MAX);
	for (size_t i = 0; i < n; i++)
		if ((rc = name_ok(names[i])))
			return rc;
	if (!rcs && !(rcs = own = malloc(n * sizeof(*rcs))))
		return tfs_seterr(-ENOMEM, "out of memory");
	rc = batch_run(c, n, fill_unlink, names, NULL, rcs);
	free(own);
	return rc;
}
