/* Queue holders: the references `get` takes for a (node, pid), each with its count and
 * its field holder:<node>:<pid> in the record, and the reaping of holders whose process
 * is gone. Under tfs_tensors.ns. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "tensors/quota.h"
#include "tensors/tensor.h"
#include "store/writer.h"
#include "log.h"
#include "store/schema.h"
#include "store/records.h"
#include "util/clock.h"
#include "tensors/tensors.h"

/* A holder's count and the refcount that changed with it, in one write: the daemon's
 * counts are the truth (a resync writes them whole too), so no increment is needed. */
static int save_holder(struct tfsd_tensor *t, const struct tfs_holder *h)
{
	t->meta.refcount = tfs_tensor_refcount(t);
	return tfs_store_holder_save(t->key, h->node, h->pid, h->uid, h->count,
				     t->meta.refcount);
}

/* Every hold of t, of all its holders: at most max_holds, so a walk is short. */
static int64_t holds_of(const struct tfsd_tensor *t)
{
	int64_t n = 0;

	for (const struct tfs_holder *h = t->holders; h; h = h->next)
		n += h->count;
	return n;
}

int tfs_tensor_hold(struct tfsd_tensor *t, const char *node, int64_t pid, int64_t uid,
		    int64_t lease)
{
	struct tfs_holder *h;
	int rc;

	for (h = t->holders; h; h = h->next)
		if (h->pid == pid && strcmp(h->node, node) == 0)
			break;
	if (h && h->uid != uid)
		return -EPERM;
	if (t->moving)
		return -EBUSY;  /* its handle is about to change */
	if ((uint64_t)holds_of(t) >= tfs_limits.holds)
		return -EMLINK;
	if ((rc = tfs_quota_holds_check(uid, 1)))
		return rc;
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h)
			return -ENOMEM;
		snprintf(h->node, sizeof(h->node), "%s", node);
		h->pid = pid;
		h->uid = uid;
		h->expires = lease ? tfs_now() + lease : 0;
		h->next = t->holders;
		t->holders = h;
	}
	/* A later get with a lease extends it; without, a leased hold keeps its lease. */
	if (lease && h->expires)
		h->expires = tfs_now() + lease;
	h->count++;
	tfs_quota_holds(uid, 1);
	tfs_tensor_unsum(t);      /* a holder may write through the handle */
	return save_holder(t, h);
}

/* Drops n holds of h. The caller then calls drop_if_unused, unless this returns 1: the
 * record is then up to date (the count is still > 0 and was written with the refcount). */
static int holder_drop(struct tfsd_tensor *t, struct tfs_holder *h, int64_t n)
{
	char node[TFS_NODE_MAX];
	int64_t pid = h->pid;
	struct tfs_holder **pp;

	tfs_quota_holds(h->uid, -n);
	h->count -= n;
	if (h->count > 0) {
		save_holder(t, h);
		return 1;
	}
	snprintf(node, sizeof(node), "%s", h->node);
	for (pp = &t->holders; *pp; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			free(h);
			break;
		}
	}
	/* At 0 the whole record goes (drop_if_unused): no need to take the field out first. */
	if (tfs_tensor_refcount(t) > 0)
		tfs_store_holder_delete(t->key, node, pid);
	return 0;
}

int tfs_tensor_release(struct tfsd_tensor *t, const char *node, int64_t pid, int64_t uid)
{
	struct tfs_holder *h;

	for (h = t->holders; h; h = h->next)
		if (h->pid == pid && strcmp(h->node, node) == 0)
			break;
	if (!h || (uid >= 0 && h->uid != uid))
		return -ENOENT;
	if (!holder_drop(t, h, 1))
		tfs_tensor_drop_if_unused(t);
	return 0;
}

int tfs_tensor_renew(struct tfsd_tensor *t, const char *node, int64_t pid, int64_t uid,
		     int64_t lease)
{
	struct tfs_holder *h;

	for (h = t->holders; h; h = h->next)
		if (h->pid == pid && strcmp(h->node, node) == 0)
			break;
	if (!h || (uid >= 0 && h->uid != uid) || !h->expires)
		return -ENOENT;
	h->expires = tfs_now() + lease;
	return 0;
}

int tfs_tensor_revoke(struct tfsd_tensor *t, const char *node, int64_t pid)
{
	struct tfs_holder *h, *next;
	int n = 0;

	for (h = t->holders; h; h = next) {
		next = h->next;
		if (node && (h->pid != pid || strcmp(h->node, node)))
			continue;
		tfs_log(LOG_NOTICE, "%s: revoked the %lld hold(s) of holder %s:%lld (uid %lld)",
			t->name, (long long)h->count, h->node, (long long)h->pid, (long long)h->uid);
		holder_drop(t, h, h->count);
		n++;
	}
	if (!n)
		return -ENOENT;
	tfs_tensor_drop_if_unused(t);
	return n;
}

char *tfs_tensor_holds_text(const struct tfsd_tensor *t, size_t *len)
{
	size_t cap = 1, n = 0;
	char *buf;

	for (const struct tfs_holder *h = t->holders; h; h = h->next)
		cap += strlen(h->node) + 4 * 24;
	if (!(buf = malloc(cap)))
		return NULL;
	buf[0] = '\0';
	for (const struct tfs_holder *h = t->holders; h; h = h->next)
		n += (size_t)snprintf(buf + n, cap - n, "%s:%lld %lld %lld %lld\n", h->node,
				      (long long)h->pid, (long long)h->count, (long long)h->uid,
				      (long long)h->expires);
	*len = n;
	return buf;
}

struct reap_now {
	int64_t s;                   /* tfs_now: holders' leases */
	int64_t mono_ns;             /* tfs_mono_ns: the kernel's references */
};

static void reap_one(struct tfsd_tensor *t, void *arg)
{
	const struct reap_now *rn = arg;
	struct tfs_holder *h, *next;
	int64_t now = rn->s;
	int dropped = tfs_tensor_pin_expired(t, rn->mono_ns);

	for (h = t->holders; h; h = next) {
		next = h->next;
		if (h->expires) {
			if (now < h->expires)
				continue;
			tfs_log(LOG_INFO, "%s: the lease of holder %s:%lld ran out, dropping its "
				"%lld reference(s)", t->name, h->node, (long long)h->pid,
				(long long)h->count);
			holder_drop(t, h, h->count);
			dropped = 1;
			continue;
		}
		/* Only pids of this node can be checked; other nodes reap their own. */
		if (strcmp(h->node, tfs_schema.node) || h->pid <= 0)
			continue;
		if (kill((pid_t)h->pid, 0) == 0 || errno != ESRCH)
			continue;
		tfs_log(LOG_INFO, "%s: holder pid %lld is gone, dropping its %lld reference(s)",
			t->name, (long long)h->pid, (long long)h->count);
		holder_drop(t, h, h->count);
		dropped = 1;
	}
	if (dropped)
		tfs_tensor_drop_if_unused(t);
}

void tfs_tensor_reap(void)
{
	struct reap_now now = { tfs_now(), tfs_mono_ns() };

	tfs_table_foreach(reap_one, &now);
}
