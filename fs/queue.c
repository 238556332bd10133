/* The lifecycle queue worker (SPEC §8): pops JSON commands from the shared queue and from
 * this node's own queue (commands other daemons forwarded because this node owns the
 * tensor), answers on the reply key, reaps holders whose process died, and rewrites this
 * node's records after Redis comes back. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "daemon.h"
#include "dtype.h"
#include "log.h"

#define REPLY_TTL "60"
#define POP_BATCH 64

static void reply(const struct tfs_cmd *c, char *json)
{
	if (!json) {
		tfs_log(LOG_ERR, "queue: out of memory building a reply");
		return;
	}
	/* Behind the record writes it reports, on the same ordered connection: a client
	 * that has its reply finds the records in Redis. */
	if (c->reply[0]) {
		tfs_wb_cmdf("LPUSH %s %s", c->reply, json);
		tfs_wb_cmdf("EXPIRE %s " REPLY_TTL, c->reply);
	}
	free(json);
}

static void reply_err(const struct tfs_cmd *c, int err, const char *msg)
{
	tfs_log(LOG_INFO, "queue: %s id=%s: %s (%s)", c->name[0] ? c->name : "?",
		c->id[0] ? c->id : "-", msg, tfs_errno_name(err));
	if (c->reply[0])
		reply(c, tfs_reply_err(c->id, err, msg));
}

static void reply_ok(const struct tfs_cmd *c, struct tfs_tensor *t)
{
	struct tfs_meta m = t->meta;

	m.refcount = tfs_tensor_refcount(t);
	if (c->reply[0])
		reply(c, tfs_reply_ok(c->id, c->name, &m));
}

/* Hands a command to the daemon of the node that owns the tensor. */
static void forward(const struct tfs_cmd *c, const char *json, size_t len, const char *owner,
		    int from_node_queue)
{
	char key[600];

	if (from_node_queue) {
		/* Forwarded to us, yet not ours: the record changed hands; do not bounce. */
		reply_err(c, EREMOTE, "tensor is owned by another node");
		return;
	}
	snprintf(key, sizeof(key), "{%s}:node:%s", tfs_d.o.queue, owner);
	if (tfs_wb_cmdf("LPUSH %s %b", key, json, len))
		reply_err(c, ENOMEM, "cannot forward to the owning node");
}

/* Who owns name when it is not in our table: 0 with owner filled, or -errno. */
static int owner_of(const char *name, char *owner, size_t size)
{
	struct tfs_meta m;
	int rc = tfs_rec_type(name);

	if (rc < 0)
		return rc;
	if (rc == 'd')
		return -EISDIR;
	rc = tfs_rec_tensor(name, &m);
	if (rc)
		return rc == -EBADMSG ? -EIO : rc;
	if (strcmp(m.node, tfs_d.o.node) == 0)
		return -ENOENT;
	snprintf(owner, size, "%s", m.node);
	return 0;
}

static void do_create(const struct tfs_cmd *c)
{
	struct tfs_dirrec d;
	struct tfs_tensor *t;
	char parent[4096];
	const char *base;
	int rc;

	tfs_split(c->name, parent, sizeof(parent), &base);
	rc = tfs_rec_dir(parent, &d);
	if (rc) {
		reply_err(c, -rc, rc == -ENOENT ? "parent directory does not exist" : "Redis error");
		return;
	}
	rc = tfs_tensor_create(c->name, c->dtype, c->has_device ? c->device :
			       d.has_device ? d.device : tfs_d.o.device,
			       geteuid(), getegid(), 0644, 0, &t);
	if (rc) {
		reply_err(c, -rc, rc == -EEXIST ? "name exists" : rc == -EINVAL ?
			  "no such device" : "cannot create");
		return;
	}
	rc = tfs_tensor_shape(t, c->dtype, &c->shape, 0);
	if (rc) {
		/* Nothing half-made stays behind: the name goes with the failed allocation. */
		tfs_tensor_unlink(t);
		reply_err(c, -rc, rc == -ENOSPC ? "out of device memory" : "cannot allocate");
		return;
	}
	tfs_log(LOG_DEBUG, "queue: created %s", c->name);
	reply_ok(c, t);
}

static void process(const char *json, size_t len, int from_node_queue)
{
	struct tfs_cmd c;
	struct tfs_tensor *t;
	char err[256], owner[TFS_NODE_MAX];
	const char *node;
	int rc;

	rc = tfs_cmd_parse(json, len, &c, err, sizeof(err));
	if (rc) {
		tfs_log(LOG_WARNING, "queue: bad command (%s): %.200s", err, json);
		if (c.reply[0])
			reply(&c, tfs_reply_err(c.id, rc, err));
		return;
	}
	node = c.node[0] ? c.node : tfs_d.o.node;
	pthread_mutex_lock(&tfs_d.ns);
	if (c.op == TFS_OP_CREATE) {
		if (c.node[0] && strcmp(c.node, tfs_d.o.node) && !from_node_queue)
			forward(&c, json, len, c.node, 0);   /* made on the node it names */
		else
			do_create(&c);
		goto out;
	}
	t = tfs_table_find(c.name);
	if (!t) {
		rc = owner_of(c.name, owner, sizeof(owner));
		if (rc == 0)
			forward(&c, json, len, owner, from_node_queue);
		else
			reply_err(&c, -rc, rc == -ENOENT ? "no such tensor" :
				  rc == -EISDIR ? "is a directory" : "Redis error");
		goto out;
	}
	if (c.op == TFS_OP_GET) {
		rc = tfs_tensor_hold(t, node, c.pid);
		if (rc)
			reply_err(&c, -rc, "cannot record the holder");
		else
			reply_ok(&c, t);
		goto out;
	}
	/* delete: the caller's hold if it has one, else the name (the create's reference). */
	struct tfs_meta m = t->meta;
	m.refcount = tfs_tensor_refcount(t) - 1;
	rc = tfs_tensor_release(t, node, c.pid);
	if (rc == -ENOENT)
		rc = tfs_tensor_unlink(t);
	if (rc)
		reply_err(&c, -rc, "cannot delete");
	else if (c.reply[0])
		reply(&c, tfs_reply_ok(c.id, c.name, &m));
out:
	pthread_mutex_unlock(&tfs_d.ns);
}

static void housekeeping(int64_t *last_reap)
{
	int64_t now = tfs_now();

	if (tfs_d.redis_down && tfs_rl_get()) {
		pthread_mutex_lock(&tfs_d.ns);
		tfs_d.redis_down = 0;
		if (tfs_tensor_resync() == 0)
			tfs_log(LOG_NOTICE, "Redis is back: records of this node rewritten");
		else
			tfs_d.redis_down = 1;
		pthread_mutex_unlock(&tfs_d.ns);
	}
	if (now != *last_reap) {
		*last_reap = now;
		pthread_mutex_lock(&tfs_d.ns);
		tfs_tensor_reap();
		pthread_mutex_unlock(&tfs_d.ns);
	}
}

/* With several clients the queue is rarely empty: take what waits behind the command
 * just popped in one round trip (in the same order BRPOP would), not one each. */
static void pop_more(const char *queue, int node_q)
{
	redisReply *r;
	int rc;

	r = tfs_rl_cmdf_unordered(&rc, "RPOP %s %d", queue, POP_BATCH);
	if (!r)
		return;
	if (r->type == REDIS_REPLY_ARRAY)
		for (size_t i = 0; i < r->elements && !tfs_d.stopping; i++)
			if (r->element[i]->type == REDIS_REPLY_STRING)
				process(r->element[i]->str, r->element[i]->len, node_q);
	freeReplyObject(r);
}

static void *queue_main(void *arg)
{
	int64_t last_reap = 0;
	redisReply *r;
	int rc;

	(void)arg;
	while (!tfs_d.stopping) {
		housekeeping(&last_reap);
		r = tfs_rl_cmdf_unordered(&rc, "BRPOP %s %s 0.5", tfs_d.o.queue,
					  tfs_d.node_queue);
		if (!r) {
			if (rc == -EIO)
				usleep(200000);      /* Redis away: retry without spinning */
			continue;
		}
		if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
		    r->element[1]->type == REDIS_REPLY_STRING) {
			int node_q = strcmp(r->element[0]->str, tfs_d.node_queue) == 0;
			process(r->element[1]->str, r->element[1]->len, node_q);
			pop_more(node_q ? tfs_d.node_queue : tfs_d.o.queue, node_q);
		}
		freeReplyObject(r);
	}
	tfs_rl_close_thread();
	return NULL;
}

int tfs_queue_start(void)
{
	int rc;

	snprintf(tfs_d.node_queue, sizeof(tfs_d.node_queue), "{%s}:node:%s", tfs_d.o.queue,
		 tfs_d.o.node);
	rc = pthread_create(&tfs_d.queue_thread, NULL, queue_main, NULL);
	if (rc)
		return -rc;
	tfs_d.queue_started = 1;
	return 0;
}

void tfs_queue_stop(void)
{
	if (!tfs_d.queue_started)
		return;
	tfs_d.stopping = 1;
	pthread_join(tfs_d.queue_thread, NULL);
	tfs_d.queue_started = 0;
}
