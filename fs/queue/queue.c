/* The lifecycle queue worker (docs/contract.md): takes JSON commands from the shared queue,
 * the per-user queues and this node's own queue (commands other daemons forwarded because
 * this node owns the tensor) onto this node's processing list (redis.c), answers each on
 * its reply key as it takes it off that list, reaps holders whose process died, and
 * rewrites this node's records after Redis comes back. What the processing list still
 * holds at start, or after a take whose reply was lost, was never answered: it is served
 * first (recover). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "store/conn.h"
#include "store/lease.h"
#include "kernel/kernel_cache.h"
#include "kernel/node.h"
#include "queue/queue.h"
#include "queue/auth.h"
#include "queue/redis.h"
#include "queue/users.h"
#include "util/stats.h"
#include "store/store.h"
#include "tensors/resync.h"
#include "tensors/tensor.h"
#include "store/writer.h"
#include "dtype.h"
#include "log.h"
#include "strutil.h"
#include "store/schema.h"
#include "store/records.h"
#include "store/claims.h"
#include "store/restore.h"
#include "util/clock.h"
#include "mem/backend.h"
#include "tensors/tensors.h"

/* The queue thread, and what tells it to stop (tfs_queue_stop). */
static pthread_t queue_thread;
static int queue_started;
static volatile int queue_stopping;
struct tfs_queue_opts tfs_queue = { .max_cmd = 64 << 10, .max_batch = 1 << 20, .max_forward = 10000 };

#define REPLY_TTL 60
/* A node's registry key is its lease (lease.h, renewed by a thread of its own): a node whose
 * lease ran out is dead to forwards. A forwarded command not popped within FORWARD_TTL
 * goes with its list. */
#define FORWARD_TTL 60
#ifndef POP_BATCH
#define POP_BATCH 64
#endif
/* Commands handled under one hold of the namespace lock, so that the claims of their
 * creates share one round trip; few enough that FUSE operations do not wait long (64
 * creates of a pool's small tensors take 1-2 ms). 64 rather than 16: 14,838-15,523
 * create+write+unlink of 64 KiB per s against 11,144-12,022 with 8 clients batching 64
 * (an H100 machine, tests/bench/RESULTS-small.md). Overridable at build time, for that
 * measurement, as POP_BATCH is. */
#ifndef CHUNK
#define CHUNK 64
#endif

struct qcmd {
	struct tfs_cmd c;
	int rc;                      /* tfs_cmd_parse's */
	char err[256];
	struct tfs_qentry e;         /* as it waits on the processing list */
	int node_q;                  /* from this node's list: forwarded by another daemon */
	int answered;                /* taken off the processing list (or on its way) */
	const char *json;
	size_t len;
	struct tfs_store_claim *claim;   /* a create's name, claimed ahead (preclaim) */
	struct tfs_dirrec parent;    /* with claim: the parent's record it was checked on */
	const struct tfs_quser *who; /* the sender, as its list says; NULL: trusted */
	struct tfs_quser ident;      /* who's storage for a command another node forwarded */
};

/* The daemon's own uid and gid, a trusted sender's: read once (a system call each costs
 * a few microseconds per create in a VM). */
static uid_t self_uid;
static gid_t self_gid;

/* The command being served (process_one): its answer takes it off the processing list. */
static struct qcmd *cur;

/* Answers cur (json: NULL for none, or what could not be built), taking it off the
 * processing list, once. */
static void answer(char *json)
{
	const struct tfs_cmd *c = &cur->c;
	const char *key = c->reply[0] ? c->reply : NULL;

	if (cur->answered) {
		free(json);
		return;
	}
	if (key && !json) {
		tfs_log(LOG_ERR, "queue: out of memory building a reply");
		key = NULL;
	}
	if (key && !tfs_store_reply_key_ok(key)) {
		tfs_log(LOG_WARNING, "queue: id=%s: no reply on '%s': a key of the daemon's",
			c->id[0] ? c->id : "-", key);
		key = NULL;
	}
	/* Behind the record writes it reports, in the same MULTI/EXEC (the chunk's group,
	 * whose last write is the answers' script): a client that has its reply finds the
	 * records in Redis, and a command is in Redis either unanswered with none of its
	 * writes or answered with all of them. */
	if (tfs_qredis_answer(&cur->e, key, key ? json : NULL, REPLY_TTL))
		tfs_log(LOG_ERR, "queue: id=%s: out of memory: not answered (it is served again "
			"at the next start)", c->id[0] ? c->id : "-");
	cur->answered = 1;
	free(json);
}

static void reply(const struct tfs_cmd *c, char *json)
{
	(void)c;
	answer(json);
}

static void reply_err(const struct tfs_cmd *c, int err, const char *msg)
{
	tfs_log(LOG_INFO, "queue: %s id=%s: %s (%s)", c->name[0] ? c->name : "?",
		c->id[0] ? c->id : "-", msg, tfs_errno_name(err));
	reply(c, c->reply[0] ? tfs_reply_err(c->id, err, msg) : NULL);
}

/* A VMM tensor's memory comes only from the handle socket: the reply names it, for a
 * client that has no file of the mount (docs/vmm.md). */
static void name_hsock(struct tfs_meta *m)
{
	const char *hs = __atomic_load_n(&tfs_queue.hsock, __ATOMIC_ACQUIRE);

	if (hs && m->has_handle && memcmp(m->ipc_handle, TFS_VMM_MAGIC, 8) == 0)
		snprintf(m->hsock, sizeof(m->hsock), "%s", hs);
}

static void reply_ok(const struct tfs_cmd *c, struct tfsd_tensor *t)
{
	struct tfs_meta m = t->meta;

	m.refcount = tfs_tensor_refcount(t);
	name_hsock(&m);
	reply(c, c->reply[0] ? tfs_reply_ok(c->id, c->name, &m) : NULL);
}

/* Hands a command to the daemon of the node that owns the tensor. */
static void forward(const struct tfs_cmd *c, const char *json, size_t len, const char *owner,
		    int from_node_queue, const struct tfs_quser *who)
{
	char *buf;
	int n, rc;

	if (from_node_queue) {
		/* Forwarded to us, yet not ours: the record changed hands; do not bounce. */
		reply_err(c, EREMOTE, "tensor is owned by another node");
		return;
	}
	if (!who) {
		rc = tfs_qredis_forward(&cur->e, owner, json, len, FORWARD_TTL,
					tfs_queue.max_forward);
	} else {
		/* The sender's identity travels in front of the command ("u:<uid>\n"): only
		 * daemons may push to node lists, so the owner can believe it. */
		buf = malloc(len + 32);
		if (!buf) {
			reply_err(c, ENOMEM, "cannot forward to the owning node");
			return;
		}
		n = snprintf(buf, 32, "u:%u\n", (unsigned)who->uid);
		memcpy(buf + n, json, len);
		rc = tfs_qredis_forward(&cur->e, owner, buf, len + (size_t)n, FORWARD_TTL,
					tfs_queue.max_forward);
		free(buf);
	}
	if (rc == 0)
		cur->answered = 1;          /* the owner answers it */
	else if (rc == -EHOSTDOWN)
		reply_err(c, EHOSTDOWN, "the node this command names is not alive");
	else if (rc == -EAGAIN)
		reply_err(c, EAGAIN, "the owning node's queue is full");
	else
		reply_err(c, -rc, "cannot forward to the owning node");
}

/* Who owns name when it is not in our table: 0 with owner filled, or -errno. */
static int owner_of(const char *name, char *owner, size_t size)
{
	struct tfs_meta m;
	int rc = tfs_store_type(name);

	if (rc < 0)
		return rc;
	if (rc == 'd')
		return -EISDIR;
	rc = tfs_store_tensor(name, &m);
	if (rc)
		return rc == -EBADMSG ? -EIO : rc;
	if (strcmp(m.node, tfs_schema.node) == 0)
		return -ENOENT;
	snprintf(owner, size, "%s", m.node);
	return 0;
}

static int create_device(const struct tfs_cmd *c, const struct tfs_dirrec *d)
{
	return c->has_device ? c->device : d->has_device ? d->device : tfs_mem.device;
}

/* A create this node makes (not one it forwards to the node the command names). */
static int local_create(const struct tfs_cmd *c, int from_node_queue)
{
	return !c->node[0] || strcmp(c->node, tfs_schema.node) == 0 || from_node_queue;
}

/* The record of the directory c's tensor goes in. 0, -ENOENT or -EIO. */
static int parent_of(const struct tfs_cmd *c, struct tfs_dirrec *d)
{
	char parent[TFS_PATH_MAX];
	const char *base;

	tfs_split(c->name, parent, sizeof(parent), &base);
	return tfs_store_dir(parent, d);
}

static const char *create_err(int rc)
{
	return rc == -EEXIST ? "name exists" : rc == -EINVAL ? "no such device" :
	       rc == -ENOSPC ? "out of device memory" :
	       rc == -EDQUOT ? "the owner has max_user_tensors tensors" :
	       rc == -ENAMETOOLONG ? "path past max_path or max_depth" : "cannot create";
}

/* The directories whose entries came or went through the group's commands: their
 * times move once per group, in its last write (group_last), with the answers and in
 * the same MULTI/EXEC as the entries' own writes. */
static struct {
	char *name[CHUNK];
	size_t n;
} touched;

/* The times of parent (a directory whose entry changed) moved now, and the kernel's copy
 * of its attributes dropped. Best effort: the change itself was made. */
static void touch_now(const char *parent)
{
	if (tfs_store_dir_touch(parent)) {
		tfs_log(LOG_INFO, "queue: /%s: cannot update the directory's times", parent);
		return;
	}
	tfs_kcache_forget_dir(parent);
}

/* An entry of name's directory came or went through the queue: its mtime and ctime move
 * as they do through the mount, and the kernel's copy of its attributes goes (the daemon's
 * own writes are not reported back to it), once for the group. */
static void parent_changed(const char *name)
{
	char parent[TFS_PATH_MAX];
	const char *base;
	size_t i;

	tfs_split(name, parent, sizeof(parent), &base);
	for (i = 0; i < touched.n; i++)
		if (strcmp(touched.name[i], parent) == 0)
			return;
	if (touched.n == CHUNK || !(touched.name[touched.n] = strdup(parent))) {
		touch_now(parent);
		return;
	}
	touched.n++;
}

/* The group's last write, each time its writes go to the writer: the directories' times,
 * then the answers (redis.c). */
static int group_last(void *arg)
{
	(void)arg;
	for (size_t i = 0; i < touched.n; i++) {
		touch_now(touched.name[i]);
		free(touched.name[i]);
	}
	touched.n = 0;
	return tfs_qredis_answers(NULL);
}

/* The name the queue removed: the kernel's node for it (a process has it open, or looked
 * it up a moment ago) now serves the tensor where it lives on (ukey), or nothing, as after
 * rm through the mount; it never follows the name to a tensor made under it later. */
static void detach(const char *name, const char *ukey)
{
	uint64_t parent, id;
	const char *base = strrchr(name, '/');

	if (tfs_node_find(name, &parent, &id) == 0 && parent)
		tfs_node_detach(parent, base ? base + 1 : name, ukey);
}

/* cl: the name claimed ahead by preclaim (pd: the parent's record then), or NULL to
 * claim it now. */
static void do_create(const struct tfs_cmd *c, struct tfs_store_claim *cl,
		      const struct tfs_dirrec *pd, const struct tfs_quser *who)
{
	struct tfs_dirrec d;
	struct tfsd_tensor *t;
	uid_t uid = who ? who->uid : self_uid;
	uint32_t gid = who ? who->gid : self_gid, mode = 0644;
	int rc;

	if (cl) {
		d = *pd;
	} else {
		rc = parent_of(c, &d);
		if (rc == -ENOENT && who)
			rc = tfs_qauth_search(who, c->name);
		if (rc) {
			reply_err(c, -rc, rc == -ENOENT ? "parent directory does not exist" :
				  rc == -EACCES ? "permission denied" : "Redis error");
			return;
		}
		if ((rc = tfs_qauth_create(who, c->name, &d))) {
			reply_err(c, -rc, "permission denied");
			return;
		}
		rc = tfs_tensor_claim(c->name, create_device(c, &d), uid, &d, &cl);
		if (rc) {
			reply_err(c, -rc, create_err(rc));
			return;
		}
	}
	/* Made shaped: one record write, and the allocation overlaps the claim's round trip. */
	/* A set-group-ID directory gives its group, as through the mount. */
	tfs_store_dir_inherit(&d, 0, &gid, &mode);
	rc = tfs_tensor_create_claimed(cl, c->name, c->dtype, &c->shape, create_device(c, &d),
				       uid, gid, mode, &d, 0, &t);
	if (rc) {
		reply_err(c, -rc, create_err(rc));
		return;
	}
	tfs_log(LOG_DEBUG, "queue: created %s", c->name);
	tfs_kcache_forget(c->name);      /* the kernel may still know a tensor gone before it */
	parent_changed(c->name);
	reply_ok(c, t);
}

/* Whether a command before q[i] in the chunk names the same tensor: then q[i]'s claim
 * could not be answered before those run, and it is made in turn. */
static int named_before(const struct qcmd *q, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (!q[j].rc && strcmp(q[j].c.name, q[i].c.name) == 0)
			return 1;
	return 0;
}

/* Sends the claims of the chunk's creates together: one round trip for all, which each
 * create then awaits in turn, instead of one each. A create that fails a check here is
 * left to claim in turn, where do_create reports the failure. Caller holds ns until the
 * chunk is done, so no name changes meanwhile. */
static void preclaim(struct qcmd *q, size_t n)
{
	tfs_store_claims_begin();
	for (size_t i = 0; i < n; i++) {
		const struct tfs_cmd *c = &q[i].c;

		if (q[i].rc || c->op != TFS_OP_CREATE || !local_create(c, q[i].node_q) ||
		    named_before(q, i))
			continue;
		if (parent_of(c, &q[i].parent) ||
		    tfs_qauth_create(q[i].who, c->name, &q[i].parent) ||
		    tfs_tensor_claim(c->name, create_device(c, &q[i].parent),
				     q[i].who ? q[i].who->uid : self_uid, &q[i].parent,
				     &q[i].claim))
			q[i].claim = NULL;
	}
	tfs_store_claims_end();
}

/* Whether pid is a process of who's in this daemon's pid namespace on this node: the
 * only holder a per-user get may name, so the reaper can tell when it is gone and no one
 * can take or drop holds in another's name. */
static int own_process(const struct tfs_quser *who, const char *node, int64_t pid)
{
	char path[64];
	struct stat st;

	if (strcmp(node, tfs_schema.node) || pid <= 0 || pid > 0x3fffffff)
		return 0;
	snprintf(path, sizeof(path), "/proc/%lld", (long long)pid);
	return stat(path, &st) == 0 && st.st_uid == who->uid;
}

/* Whether pid is a live process of this node as the daemon sees it (a pid of another pid
 * namespace may name an unrelated process here: that is what leases are for). */
static int local_process(const char *node, int64_t pid)
{
	if (strcmp(node, tfs_schema.node) || pid <= 0 || pid > 0x3fffffff)
		return 0;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* One command; caller holds ns and the chunk's group, where its writes and its answer go. */
static void process_one(struct qcmd *q)
{
	struct tfs_cmd *c = &q->c;
	struct tfsd_tensor *t;
	char owner[TFS_NODE_MAX];
	const char *node;
	int rc, from_node_queue = q->node_q;

	tfs_stats_add(TFS_ST_QUEUE_CMDS, 1);
	cur = q;
	q->answered = 0;
	if (q->rc) {
		tfs_log(LOG_WARNING, "queue: bad command (%s): %.*s", q->err,
			(int)(q->len < 200 ? q->len : 200), q->json);
		reply(c, c->reply[0] ? tfs_reply_err(c->id, q->rc, q->err) : NULL);
		goto out;
	}
	node = c->node[0] ? c->node : tfs_schema.node;
	if (c->op == TFS_OP_CREATE) {
		if (!local_create(c, from_node_queue))
			forward(c, q->json, q->len, c->node, 0, q->who);   /* made where it says */
		else
			do_create(c, q->claim, &q->parent, q->who);
		q->claim = NULL;
		goto out;
	}
	/* Through the mount, a name under a directory the sender may not search is EACCES,
	 * whatever it is: whether it exists, here or on another node, is not the sender's
	 * to learn, so this comes before any other answer. */
	if (q->who && tfs_qauth_search(q->who, c->name) == -EACCES) {
		reply_err(c, EACCES, "permission denied");
		goto out;
	}
	t = tfs_table_find(c->name);
	if (!t) {
		rc = owner_of(c->name, owner, sizeof(owner));
		if (rc == 0)
			forward(c, q->json, q->len, owner, from_node_queue, q->who);
		else
			reply_err(c, -rc, rc == -ENOENT ? "no such tensor" :
				  rc == -EISDIR ? "is a directory" :
				  rc == -EACCES ? "permission denied" : "Redis error");
		goto out;
	}
	if (c->op == TFS_OP_GET) {
		/* A hold is reaped when its process is gone: without a pid nothing could ever
		 * tell, and the tensor would stay pinned. */
		if (!c->pid) {
			reply_err(c, EINVAL, "get needs the holder's pid");
			goto out;
		}
		if ((rc = tfs_qauth_get(q->who, c->name, &t->meta))) {
			reply_err(c, -rc, "permission denied");
			goto out;
		}
		/* Without a lease the hold lasts while its pid lives, which only a pid of this
		 * node, in the daemon's pid namespace, can tell: anything else needs a lease,
		 * or it could never be reaped. */
		if (!c->lease && q->who && !own_process(q->who, node, c->pid)) {
			reply_err(c, EPERM, "pid is not a process of the sender on this node "
				  "(a holder elsewhere needs a 'lease')");
			goto out;
		}
		if (!c->lease && !q->who && !local_process(node, c->pid)) {
			reply_err(c, ESRCH, "no such process on this node (a holder on another "
				  "node or in another pid namespace needs a 'lease')");
			goto out;
		}
		rc = tfs_tensor_hold(t, node, c->pid, q->who ? (int64_t)q->who->uid : -1, c->lease);
		if (rc)
			reply_err(c, -rc, rc == -EMLINK ? "the tensor has max_holds holds" :
				  rc == -EDQUOT ? "the sender has max_user_holds holds" :
				  "cannot record the holder");
		else
			reply_ok(c, t);
		goto out;
	}
	if (c->op == TFS_OP_RENEW) {
		rc = tfs_tensor_renew(t, node, c->pid, q->who ? (int64_t)q->who->uid : -1, c->lease);
		if (rc)
			reply_err(c, ESRCH, "that pid holds no leased reference to it");
		else
			reply_ok(c, t);
		goto out;
	}
		/* delete with a pid: that holder's reference, and only that: a retry, a second
	 * delete or one after the hold was reaped must not remove the name for everyone
	 * (ESRCH). Without a pid: the name's reference (the create's), as rm does. */
	struct tfs_meta m = t->meta;
	char *ukey = NULL;
	m.refcount = tfs_tensor_refcount(t) - 1;
	if (c->pid) {
		/* A per-user sender drops only holds it took itself. */
		rc = tfs_tensor_release(t, node, c->pid, q->who ? (int64_t)q->who->uid : -1);
		if (rc == -ENOENT)
			rc = -ESRCH;
	} else if ((rc = tfs_qauth_unlink(q->who, c->name, &t->meta)) == 0 &&
		   (rc = tfs_tensor_unlink(t, &ukey)) == 0) {
		tfs_kcache_forget(c->name);
		parent_changed(c->name);
		detach(c->name, ukey);
		free(ukey);
	}
	if (rc)
		reply_err(c, -rc, rc == -ESRCH ? "that pid holds no reference to it (a delete "
			  "without pid drops the name)" : rc == -EACCES || rc == -EPERM ?
			  "permission denied" : "cannot delete");
	else
		reply(c, c->reply[0] ? tfs_reply_ok(c->id, c->name, &m) : NULL);
out:
	answer(NULL);                /* a path that had nothing to say still takes it off */
	cur = NULL;
}

/* The sender of a command popped from list (its json and len past any identity header):
 * NULL for the shared queue, the user a per-user list belongs to, or the identity a
 * forwarding daemon put in front of the command. -EACCES: an identity this node cannot
 * serve. */
static int sender(struct qcmd *q, const char *list, int from_node_queue)
{
	const char *nl;
	uint64_t uid;

	q->who = NULL;
	if (from_node_queue) {
		if (q->len < 2 || strncmp(q->json, "u:", 2))
			return 0;
		nl = memchr(q->json, '\n', q->len);
		if (!nl || tfs_parse_u64(q->json + 2, (size_t)(nl - q->json - 2), &uid) ||
		    uid > 0xfffffffeULL)
			return -EACCES;
		q->len -= (size_t)(nl + 1 - q->json);
		q->json = nl + 1;
		if (tfs_qusers_ident((uid_t)uid, &q->ident))
			return -EACCES;
		q->who = &q->ident;
		return 0;
	}
	if (strcmp(list, tfs_schema.queue) == 0)
		return 0;
	q->who = tfs_qusers_by_list(list);
	return q->who ? 0 : -EACCES;
}

/* After a string's opening quote at *p: its end (the closing quote), or NULL. */
static const char *str_end(const char *p, const char *end)
{
	for (; p < end; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p;
	}
	return NULL;
}

/* A document the parser refused (truncated, nested past its limit) may still name its id
 * and reply at the top level: read those two, when they are plain strings, so that the
 * sender hears why. Values are skipped by counting brackets, never by recursion. */
static void salvage(const char *json, size_t len, struct tfs_cmd *c)
{
	const char *p = json, *end = json + len, *k, *ke, *v, *ve;
	int depth = 0;

	while (p < end && *p != '{')
		p++;
	for (p++; p < end; p++) {
		if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (depth-- == 0)
				return;
		} else if (*p == '"') {
			k = p + 1;
			if (!(ke = str_end(k, end)))
				return;
			p = ke;
			if (depth)
				continue;
			for (v = ke + 1; v < end && (*v == ' ' || *v == ':' || *v == '\t' ||
						     *v == '\n' || *v == '\r'); v++)
				;
			if (v >= end || *v != '"')
				continue;
			if (!(ve = str_end(v + 1, end)))
				return;
			p = ve;
			/* Plain strings only: an escape might hide anything. */
			if (memchr(v + 1, '\\', (size_t)(ve - v - 1)) || ve - v - 1 >= TFS_CMD_STR)
				continue;
			if (ke - k == 2 && memcmp(k, "id", 2) == 0 && !c->id[0])
				memcpy(c->id, v + 1, (size_t)(ve - v - 1));
			else if (ke - k == 5 && memcmp(k, "reply", 5) == 0 && !c->reply[0])
				memcpy(c->reply, v + 1, (size_t)(ve - v - 1));
		}
	}
}

/* Reads one entry into q: the command, its sender and where it may be answered. */
static void take(struct qcmd *q, const char *entry, size_t elen)
{
	int who_rc;

	memset(&q->c, 0, sizeof(q->c));
	q->claim = NULL;
	q->who = NULL;
	q->err[0] = '\0';
	if (tfs_qredis_parse(entry, elen, &q->e)) {
		/* Not one this daemon made: nobody to answer, only to take off the list. */
		q->json = entry;
		q->len = elen;
		q->node_q = 0;
		q->rc = -EINVAL;
		snprintf(q->err, sizeof(q->err), "malformed processing entry");
		return;
	}
	q->json = q->e.json;
	q->len = q->e.len;
	q->node_q = strcmp(q->e.list, tfs_node_queue) == 0;
	who_rc = sender(q, q->e.list, q->node_q);
	if (q->e.oversize) {
		/* Only its start came: never parsed, answered when its id and reply are there. */
		q->rc = -EMSGSIZE;
		snprintf(q->err, sizeof(q->err), "command of %zu bytes: over queue_max_command "
			 "(%llu)", q->e.oversize, (unsigned long long)tfs_queue.max_cmd);
		if (q->e.aside[0]) {
			int rc;
			redisReply *r = tfs_qredis_aside_head(&q->e, &rc);

			if (r)
				salvage(r->str, r->len < 4096 ? r->len : 4096, &q->c);
			else
				tfs_log(LOG_WARNING, "queue: a command of about %zu bytes on %s: "
					"not read (%s), not answered", q->e.oversize, q->e.list,
					tfs_errno_name(-rc));
			freeReplyObject(r);
			snprintf(q->err, sizeof(q->err), "command of about %zu bytes: over "
				 "queue_max_command (%llu)", q->e.oversize,
				 (unsigned long long)tfs_queue.max_cmd);
		} else {
			salvage(q->json, q->len, &q->c);
		}
	} else {
		q->rc = tfs_cmd_parse(q->json, q->len, &q->c, q->err, sizeof(q->err));
		if (q->rc && !q->c.reply[0])
			salvage(q->json, q->len, &q->c);
	}
	if (who_rc && !q->rc) {
		q->rc = who_rc;
		snprintf(q->err, sizeof(q->err), "unknown sender");
	}
	/* A per-user sender is answered only on its own reply keys: it can read no other,
	 * and the daemon writes no other key in its name. */
	if (q->who && q->c.reply[0] && !tfs_store_reply_key_for(q->c.reply, q->who->uid)) {
		tfs_log(LOG_WARNING, "queue: uid %u: reply key '%.200s' is not under %s:reply: "
			"(not answered)", (unsigned)q->who->uid, q->c.reply, q->who->list);
		q->c.reply[0] = '\0';
	}
	if (who_rc)
		q->c.reply[0] = '\0';
}

/* Entries taken (el, in queue order), CHUNK at a time under the namespace lock. again:
 * taken by an earlier run, which may have died between a create's claim of its name and
 * its answer (the records and the answer go together, the claim before them): such a
 * claim is this create's to take over. */
static void process(struct qcmd *q, redisReply **el, size_t n, int again)
{
	for (size_t i = 0; i < n && !queue_stopping; i += CHUNK) {
		size_t k = 0;

		for (size_t j = i; j < n && j < i + CHUNK; j++)
			if (el[j]->type == REDIS_REPLY_STRING)
				take(&q[k++], el[j]->str, el[j]->len);
		for (size_t j = 0; again && j < k; j++)
			if (!q[j].rc && q[j].c.op == TFS_OP_CREATE && local_create(&q[j].c, q[j].node_q))
				tfs_store_claim_maybe_lost(q[j].c.name, 't');
		/* The writer is woken once for the chunk's writes and answers, not once per
		 * command: each wake is a futex call on this thread's path. A wait for the
		 * writer inside (a claim's answer) wakes it first (writer.c). */
		tfs_writer_defer_wakes(1);
		tfs_ns_lock();
		/* One MULTI/EXEC for the chunk's writes and one script for its answers, unless a
		 * read or a claim in between sends what came before it first. */
		tfs_writer_group_begin(1, group_last, NULL);
		preclaim(q, k);
		for (size_t j = 0; j < k; j++)
			process_one(&q[j]);
		tfs_writer_group_end();
		tfs_ns_unlock();
		tfs_writer_defer_wakes(0);
	}
}

/* Serves what the processing list holds, oldest first: commands taken and never answered
 * (the daemon died, or the reply of a take was lost). Each leaves the list with its
 * answer, in the same MULTI/EXEC as its writes: one still there made none of them (or
 * those of a forward, which takes it off itself), so serving it again serves it once.
 * 0; -EIO while Redis is away (tried again later); -EAGAIN when Redis keeps entries
 * that their answers should have taken (logged; tried at the next start). */
static int recover(struct qcmd *q)
{
	redisReply *r, *el[POP_BATCH];
	long long total, before = -1;
	int rc;

	for (;;) {
		/* Answers still queued would look like commands not answered. */
		if (tfs_writer_sync())
			return -EIO;
		r = tfs_qredis_pending(&rc, POP_BATCH, &total);
		if (!r)
			return rc == -EPROTO ? -EAGAIN : -EIO;
		if (!r->elements) {
			freeReplyObject(r);
			return 0;
		}
		if (before >= 0 && total >= before) {
			tfs_log(LOG_ERR, "queue: %lld commands stay on the processing list: Redis "
				"did not take the answered ones off (out of memory?)", total);
			freeReplyObject(r);
			return -EAGAIN;
		}
		if (before < 0)
			tfs_log(LOG_NOTICE, "queue: %lld commands taken before and not answered: "
				"serving them first", total);
		before = total;
		for (size_t i = 0; i < r->elements && i < POP_BATCH; i++)
			el[i] = r->element[r->elements - 1 - i];
		process(q, el, r->elements < POP_BATCH ? r->elements : POP_BATCH, 1);
		freeReplyObject(r);
		if (queue_stopping)
			return 0;
	}
}

static void housekeeping(int64_t *last_reap)
{
	static uint64_t drops_mended;
	static unsigned failovers_mended;
	static int resync_owed;
	int64_t now = tfs_now();
	uint64_t drops = tfs_writer_drops();
	unsigned failovers;
	int rc;

	/* Nothing of the node is rewritten unless its lease is ours: a lost lease (lease.c's
	 * thread) keeps tfs_conn_get failing, and a lease that lapsed with the outage is
	 * taken again (tfs_lease_check) before the records are. */
	failovers = tfs_conn_failovers();
	/* Writes dropped for the queue's bound, or lost with a primary whose replica took
	 * over: the records of tensors freed meanwhile are removed first, then every record
	 * and directory is rewritten (a tensor made in between is in the table by then). */
	if ((tfs_redis.down || drops != drops_mended || failovers != failovers_mended ||
	     __atomic_load_n(&tfs_redis.moves_pending, __ATOMIC_ACQUIRE)) &&
	    tfs_lease_check() == 0 && tfs_conn_get()) {
		tfs_redis.down = 0;
		/* The connection just made may be the one that saw the failover. */
		failovers = tfs_conn_failovers();
		if (failovers != failovers_mended)
			tfs_store_restore_all();
		rc = drops != drops_mended || failovers != failovers_mended ?
		     tfs_tensor_purge_stale() : 0;
		if (rc == 0)
			rc = tfs_tensor_resync();
		if (rc == 0) {
			tfs_ns_lock();
			rc = tfs_qusers_acl();
			tfs_ns_unlock();
		}
		if (rc == 0) {
			if (drops != drops_mended)
				tfs_writer_repaired();
			drops_mended = drops;
			failovers_mended = failovers;
			tfs_log(LOG_NOTICE, "Redis is back: records of this node rewritten");
		} else {
			tfs_redis.down = 1;
		}
	}
	if (now != *last_reap) {
		*last_reap = now;
		tfs_ns_lock();
		tfs_tensor_reap();
		tfs_tensor_unpin_forgotten();
		tfs_ns_unlock();
		/* Redis may lose records without ever dropping the connection (FLUSHALL, a
		 * hand's DEL, a restart between two commands): the root's record is the
		 * sign, checked once a second. */
		if (!tfs_redis.down && (resync_owed || tfs_store_lost() == 1)) {
			/* A failed pass is retried: the root's record, the sign, is back by now.
			 * So is one put off until the lease is ours again. */
			resync_owed = tfs_lease_check() != 0 || tfs_tensor_resync() != 0;
			if (!resync_owed)
				tfs_log(LOG_NOTICE, "Redis had lost records: those of this node "
					"rewritten");
		}
	}
}

static void *queue_main(void *arg)
{
	int64_t last_reap = 0;
	struct qcmd *q;
	redisReply *r;
	int rc, recover_owed = 1;

	(void)arg;
	q = calloc(CHUNK, sizeof(*q));
	if (!q) {
		tfs_log(LOG_ERR, "queue: out of memory: the lifecycle queue is not served");
		return NULL;
	}
	while (!queue_stopping) {
		housekeeping(&last_reap);
		if (recover_owed) {
			rc = recover(q);
			if (rc == -EIO) {
				usleep(200000);      /* Redis away: retry without spinning */
				continue;
			}
			recover_owed = 0;
		}
		tfs_qredis_drain();
		/* Up to POP_BATCH commands, and queue_max_batch bytes, in one round trip. */
		r = tfs_qredis_grab(&rc, POP_BATCH, tfs_queue.max_batch, tfs_queue.max_cmd);
		if (!r) {
			/* Whether the take happened is unknown: what it took waits on the
			 * processing list. */
			recover_owed = rc == -EIO;
			if (rc == -EIO || rc == -EPROTO)
				usleep(200000);      /* Redis away or refusing: no spinning */
			continue;
		}
		if (r->elements)
			process(q, r->element, r->elements, 0);
		else
			tfs_qredis_wait(500);
		freeReplyObject(r);
	}
	free(q);
	tfs_qredis_close();
	tfs_conn_close_thread();
	return NULL;
}

int tfs_queue_start(void)
{
	int rc;

	tfs_store_node_queue(tfs_node_queue, sizeof(tfs_node_queue), tfs_schema.node);
	self_uid = geteuid();
	self_gid = getegid();
	rc = pthread_create(&queue_thread, NULL, queue_main, NULL);
	if (rc == 0)
		pthread_setname_np(queue_thread, "tfs-queue");
	if (rc)
		return -rc;
	queue_started = 1;
	return 0;
}

void tfs_queue_stop(void)
{
	if (!queue_started)
		return;
	queue_stopping = 1;
	pthread_join(queue_thread, NULL);
	queue_started = 0;
}
