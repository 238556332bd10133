/* Directory renames (tensor.h): Redis moves the tree in one script (store.c
 * tfs_store_move_tree), then the tensors of the table under it take their new names. A
 * move whose answer was lost (Redis stalled past the command timeout, or went away) ran
 * or did not: it is kept here until a resync asks Redis which (tfs_tensor_moves_settle),
 * and meanwhile no metadata change goes to Redis (tfs_redis.moves_pending). A crash meanwhile
 * loses nothing: the tree is whole under one name in Redis, which is what adoption reads.
 * Under ns. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/node.h"
#include "log.h"
#include "store/conn.h"
#include "store/store.h"
#include "tensors/quota.h"
#include "tensors/tensor.h"

struct move {
	char *from, *to;
	char marker[TFS_NODE_MAX + 640];
	struct move *next;
};

static struct move *unsettled;

struct under {
	const char *from;
	size_t len;
	struct tfsd_tensor **t;
	size_t n, cap;
	int err;
};

static void collect(struct tfsd_tensor *t, void *arg)
{
	struct under *u = arg;
	struct tfsd_tensor **grown;

	if (u->err || !t->linked || strncmp(t->name, u->from, u->len) || t->name[u->len] != '/')
		return;
	if (u->n == u->cap) {
		u->cap = u->cap ? 2 * u->cap : 64;
		if (!(grown = realloc(u->t, u->cap * sizeof(*u->t)))) {
			u->err = -ENOMEM;
			return;
		}
		u->t = grown;
	}
	u->t[u->n++] = t;
}

/* The tensors of the table under from: renamed as their records were. Collected first:
 * a rename moves a tensor within the table being walked. */
static void follow(const char *from, const char *to)
{
	struct under u = { .from = from, .len = strlen(from) };
	size_t failed = 0;

	tfs_table_foreach(collect, &u);
	for (size_t i = 0; i < u.n; i++) {
		char *name = tfs_path_join(to, u.t[i]->name + u.len + 1);

		if (!name || tfs_tensor_renamed(u.t[i], name))
			failed++;
		free(name);
	}
	free(u.t);
	if (u.err || failed)
		tfs_log(LOG_ERR, "rename of /%s to /%s: out of memory: %zu tensor(s) keep their "
			"old names in this daemon until it restarts", from, to,
			u.err ? u.n : failed);
}

static void unsettled_add(const char *from, const char *to, const char *marker)
{
	struct move *m = calloc(1, sizeof(*m));

	if (m && (m->from = strdup(from)) && (m->to = strdup(to))) {
		snprintf(m->marker, sizeof(m->marker), "%s", marker);
		m->next = unsettled;
		unsettled = m;
		__atomic_store_n(&tfs_redis.moves_pending, 1, __ATOMIC_RELEASE);
		return;
	}
	if (m)
		free(m->from);
	free(m);
	tfs_log(LOG_ERR, "rename of /%s to /%s: answer lost and out of memory: this daemon "
		"may name its tensors by their old names until it restarts", from, to);
}

int tfs_tensor_move_dir(const char *from, const char *to)
{
	char marker[TFS_NODE_MAX + 640];
	int rc;

	/* Deeper paths inside are the script's to check, against the same bounds. */
	if ((rc = tfs_quota_path(to)))
		return rc;
	if ((rc = tfs_conn_ok()))
		return rc;
	tfs_store_move_marker(marker, sizeof(marker), tfs_node_new_ino());
	rc = tfs_store_move_tree(from, to, marker, tfs_limits.path, tfs_limits.depth);
	if (rc == -EIO) {
		tfs_log(LOG_WARNING, "rename of /%s to /%s: Redis did not answer; whether it "
			"happened is settled when Redis is back", from, to);
		unsettled_add(from, to, marker);
		return rc;
	}
	if (rc)
		return rc == -EPROTO || rc == -ECANCELED ? -EIO : rc;
	follow(from, to);
	return 0;
}

int tfs_tensor_moves_settle(void)
{
	struct move **p = &unsettled, *m;
	int rc = 0, e;

	/* Oldest first (the list's tail): a later move may be of the tree an earlier made. */
	while (unsettled) {
		for (p = &unsettled; (*p)->next; p = &(*p)->next)
			;
		m = *p;
		e = tfs_store_move_settle(m->marker, m->from, m->to);
		if (e < 0) {
			rc = e;
			break;
		}
		if (e == 1)
			follow(m->from, m->to);
		tfs_log(LOG_NOTICE, "rename of /%s to /%s, whose answer was lost: %s", m->from,
			m->to, e == 1 ? "it was made" : "it was not made");
		*p = NULL;
		free(m->from);
		free(m->to);
		free(m);
	}
	if (!unsettled)
		__atomic_store_n(&tfs_redis.moves_pending, 0, __ATOMIC_RELEASE);
	return rc;
}
