/* Start-up from what an earlier run of this node left: its Redis records and the memory its
 * keeper still holds (keeper.h). A record whose memory the keeper holds becomes a tensor of
 * the table again, with the same name, metadata, handle, offset and inode number; its
 * reference count is recomputed from the name, the queue holders whose process lives and
 * no open files (the old mount's files died with it). A record without memory is removed,
 * memory without a record is freed, but only once every record was read: a walk that
 * fails part-way (Redis stalls) frees nothing. Both are logged. After a clean unmount, or
 * with a new keeper, nothing is held and every record of the node goes: the sweep of a
 * fresh start. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tensors/adopt.h"
#include "store/store.h"
#include "tensors/quota.h"
#include "tensors/resync.h"
#include "tensors/tensor.h"
#include "log.h"
#include "store/schema.h"
#include "store/records.h"
#include "util/clock.h"
#include "mem/backend.h"
#include "mem/tiers_backend.h"
#include "tensors/tensors.h"

/* Seconds a hold of another node or pid namespace survives a restart without a renew. */
#define ADOPT_LEASE 60

struct tally {
	int fresh;
	uint64_t tensors, bytes, dropped;
};

static struct timespec ts_of(int64_t s, int64_t ns)
{
	struct timespec t;

	if (ns > 0) {
		t.tv_sec = (time_t)(ns / 1000000000);
		t.tv_nsec = (long)(ns % 1000000000);
	} else {
		t.tv_sec = (time_t)s;
		t.tv_nsec = 0;
	}
	return t;
}

static void tensor_discard(struct tfsd_tensor *t)
{
	struct tfs_holder *h, *next;

	for (h = t->holders; h; h = next) {
		next = h->next;
		free(h);
	}
	free(t->name);
	free(t->key);
	free(t);
}

/* The tensor rec describes, without its memory: everything that can fail is done before
 * the memory is taken, so that no failure after it has to give memory back. NULL when out
 * of memory. */
static struct tfsd_tensor *tensor_of(const struct tfs_store_rec *rec)
{
	struct tfsd_tensor *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->name = strdup(rec->name ? rec->name : rec->key);
	t->key = strdup(rec->key);
	if (!t->name || !t->key)
		goto fail;
	t->meta = rec->meta;
	t->linked = rec->name != NULL;
	t->mtime = t->atime = ts_of(rec->meta.mtime, 0);
	t->ctime = ts_of(rec->meta.ctime, rec->meta.ctime_ns);
	for (size_t i = rec->nholders; i-- > 0;) {
		struct tfs_holder *h = calloc(1, sizeof(*h));

		/* A hold left out would count one reference less: the tensor could go. */
		if (!h)
			goto fail;
		memcpy(h->node, rec->holders[i].node, sizeof(h->node));
		h->node[sizeof(h->node) - 1] = '\0';
		h->pid = rec->holders[i].pid;
		h->count = rec->holders[i].count;
		/* The sender's uid is in the record; a lease's end lived only in the daemon
		 * that died: a hold from a process of this node stays while the process lives
		 * (as before); any other becomes a lease its holder must renew within
		 * ADOPT_LEASE seconds. */
		h->uid = rec->holders[i].uid;
		if (strcmp(h->node, tfs_schema.node) || h->pid <= 0)
			h->expires = tfs_now() + ADOPT_LEASE;
		h->next = t->holders;
		t->holders = h;
		tfs_quota_holds(h->uid, h->count);
	}
	return t;
fail:
	tensor_discard(t);
	return NULL;
}

/* tfs_store_node_records's fn: 0 (adopted, or adopted already: SCAN may return a key
 * twice), 1 (the record goes: it names no memory the keeper holds for this backend), or
 * -errno to stop the walk (nothing of this record was taken). */
static int adopt_one(struct tfs_store_rec *rec, void *arg)
{
	struct tally *n = arg;
	struct tfsd_tensor *t;
	struct tfs_alloc *a = NULL;
	int rc;

	if (n->fresh) {
		/* A new keeper holds nothing: every record of the node is of a run that is
		 * over, empty tensors too (their names would outlive everything else). */
		tfs_log(LOG_NOTICE, "removing stale record %s left by an earlier run", rec->key);
		n->dropped++;
		return 1;
	}
	if (tfs_table_find_key(rec->key))
		return 0;
	if (rec->meta.has_handle != (rec->meta.bytes > 0) ||
	    strcmp(rec->meta.backend, tfs_mem_backend_name(rec->meta.device)) ||
	    (rec->name && tfs_table_find(rec->name))) {
		tfs_log(LOG_NOTICE, "start-up: dropping record %s: it does not describe memory "
			"of this backend", rec->key);
		n->dropped++;
		return 1;
	}
	if (!(t = tensor_of(rec)))
		return -ENOMEM;
	if (rec->meta.bytes) {
		rc = tfs_mem.ops->adopt(tfs_mem.be, &rec->meta, &a);
		if (rc == -ENOENT || rc == -EINVAL) {
			tfs_log(LOG_NOTICE, "start-up: dropping record %s: %s", rec->key,
				rc == -ENOENT ? "its memory is gone" :
				"the memory its handle names does not fit it");
			n->dropped++;
			tensor_discard(t);
			return 1;
		}
		if (rc) {
			tfs_log(LOG_ERR, "start-up: cannot adopt the memory of %s: %s", rec->key,
				strerror(-rc));
			tensor_discard(t);
			return rc;
		}
	}
	pthread_rwlock_init(&t->io, NULL);
	t->alloc = a;
	if (!t->linked && rec->seq > tfs_tensors.table.unlinked_seq)
		tfs_tensors.table.unlinked_seq = rec->seq;
	tfs_table_insert(t);
	n->tensors++;
	n->bytes += rec->meta.bytes;
	return 0;
}

/* Tensors nothing holds any more (unlinked ones whose holders and files are gone). */
static void collect_unused(struct tfsd_tensor *t, void *arg)
{
	(void)arg;
	if (tfs_tensor_refcount(t) == 0)
		tfs_tensor_drop_if_unused(t);
}

int tfs_adopt(int fresh)
{
	struct tally n = { .fresh = fresh };
	int freed, rc;

	tfs_ns_lock();
	rc = tfs_store_node_records(adopt_one, &n);
	if (rc) {
		/* The walk stopped part-way: memory no record took yet may be named by a
		 * record not read yet. Everything stays with the keeper, and the start fails
		 * (a restart is tried again). */
		tfs_ns_unlock();
		return rc;
	}
	/* Every record was read: memory none of them took is named nowhere. */
	freed = tfs_mem.ops->adopt_end ? tfs_mem.ops->adopt_end(tfs_mem.be) : 0;
	tfs_tensor_reap();
	tfs_table_foreach(collect_unused, NULL);
	tfs_ns_unlock();
	if (n.tensors || n.dropped || freed)
		tfs_log(LOG_NOTICE, "start-up: adopted %" PRIu64 " tensor(s) of %" PRIu64
			" bytes; dropped %" PRIu64 " record(s) without memory; freed %d "
			"allocation(s) no record named", n.tensors, n.bytes, n.dropped, freed);
	return tfs_tensor_resync();
}
