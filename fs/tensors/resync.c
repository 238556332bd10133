/* This node's records written again from its tensors (resync.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/claims.h"
#include "store/records.h"
#include "store/restore.h"
#include "tensors/resync.h"
#include "tensors/tensor.h"
#include "tensors/tensors.h"

/* The resync's tensors, in chunks: every claim of a chunk is sent before the first is
 * awaited, so a chunk costs one round trip, not one per tensor; ns is taken per chunk and
 * let go while the claims are awaited, so metadata operations wait for one chunk at most,
 * not for the whole table.
 *
 * The tensors to rewrite are taken at the start (snap), each knowing its slot; a tensor
 * freed meanwhile empties its slot (tensor_free), so nothing freed after the start gets
 * its record written back. One renamed or unlinked meanwhile is written under the key it
 * has when its chunk is sent: every change made under ns between chunks queued its own
 * writes before the resync's, in the writer's one order. */
#define RESYNC_CHUNK 256

static struct {
	struct tfsd_tensor **t;      /* NULL: a slot whose tensor was freed */
	size_t n;
	int running;
} snap;

struct resync {
	struct tfs_store_claim *claim[RESYNC_CHUNK];
	char *name[RESYNC_CHUNK];    /* the name claimed, for the wait without ns */
	int err[RESYNC_CHUNK];
	int rc;
};

void tfs_tensor_resync_forget(struct tfsd_tensor *t)
{
	if (t->resync_slot && snap.t)
		snap.t[t->resync_slot - 1] = NULL;
	t->resync_slot = 0;
}

static void snap_add(struct tfsd_tensor *t, void *arg)
{
	(void)arg;
	snap.t[snap.n++] = t;
	t->resync_slot = snap.n;
}

/* Caller holds ns: the claims of snap.t[from, to). */
static void chunk_send(struct resync *r, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		struct tfsd_tensor *t = snap.t[i];
		size_t j = i - from;

		r->claim[j] = NULL;
		r->name[j] = NULL;
		r->err[j] = 0;
		if (!t || !t->linked)
			continue;
		r->err[j] = tfs_store_restore_parents(t->name);
		if (r->err[j] == 0 && !(r->name[j] = strdup(t->name)))
			r->err[j] = -ENOMEM;
		if (r->err[j] == 0)
			r->err[j] = tfs_store_link_send(t->name, 't', NULL, &r->claim[j]);
	}
}

/* Without ns: the claims' answers. */
static void chunk_wait(struct resync *r, size_t n)
{
	for (size_t j = 0; j < n; j++) {
		if (r->claim[j])
			r->err[j] = tfs_store_link_wait(r->name[j], 't', r->claim[j]);
		r->claim[j] = NULL;
	}
}

/* Caller holds ns: the records of the tensors of the chunk still there. */
static void chunk_save(struct resync *r, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		struct tfsd_tensor *t = snap.t[i];
		size_t j = i - from;
		int e = r->err[j];

		free(r->name[j]);
		r->name[j] = NULL;
		if (!t)
			continue;            /* freed meanwhile: its record went with it */
		t->resync_slot = 0;
		snap.t[i] = NULL;
		if (e && e != -EEXIST) {
			/* The record only once its name is back: a record in Redis then means
			 * the tensor is listed again. The next pass retries. */
			r->rc = e;
			continue;
		}
		/* Renamed or unlinked while its claim was on the way: t->key is where it
		 * lives now, and the change undid the claim behind it. */
		if (tfs_tensor_save(t) || tfs_store_restore_attrs(t->key))
			r->rc = -EIO;
		for (struct tfs_holder *h = t->holders; h; h = h->next)
			tfs_store_holder_save(t->key, h->node, h->pid, h->uid, h->count, -1);
	}
}

/* A record of this node with no tensor of the table behind it. */
static int purge_one(struct tfs_store_rec *rec, void *arg)
{
	int keep;

	(void)arg;
	tfs_ns_lock();
	keep = tfs_table_find_key(rec->key) != NULL;
	tfs_ns_unlock();
	return keep ? 0 : 1;
}

int tfs_tensor_purge_stale(void)
{
	return tfs_store_node_records(purge_one, NULL);
}

/* tfs_store_claims_settle's question: a name this node made since is its own. Under ns. */
static int is_local(const char *name)
{
	return tfs_table_find(name) != NULL;
}

int tfs_tensor_resync(void)
{
	struct resync *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	tfs_ns_lock();
	if (snap.running) {
		/* One at a time: the slots are the running one's. */
		tfs_ns_unlock();
		free(r);
		return -EBUSY;
	}
	snap.running = 1;
	/* Tree moves whose answer was lost first: the table then names what Redis does. */
	rc = tfs_tensor_moves_settle();
	if (rc == 0)
		rc = tfs_store_restore_dirs();
	if (rc == 0 && tfs_tensors.table.count &&
	    !(snap.t = calloc(tfs_tensors.table.count, sizeof(*snap.t))))
		rc = -ENOMEM;
	if (rc == 0 && snap.t)
		tfs_table_foreach(snap_add, NULL);
	tfs_ns_unlock();
	for (size_t from = 0; rc == 0 && from < snap.n; from += RESYNC_CHUNK) {
		size_t to = from + RESYNC_CHUNK < snap.n ? from + RESYNC_CHUNK : snap.n;

		tfs_ns_lock();
		chunk_send(r, from, to);
		/* The claims go to the writer before ns is let go: the chunk's place in the
		 * order of writes is decided under ns. */
		tfs_ns_unlock();
		chunk_wait(r, to - from);
		tfs_ns_lock();
		chunk_save(r, from, to);
		tfs_ns_unlock();
	}
	tfs_ns_lock();
	for (size_t i = 0; i < snap.n; i++)
		if (snap.t[i])
			snap.t[i]->resync_slot = 0;
	free(snap.t);
	snap.t = NULL;
	snap.n = 0;
	snap.running = 0;
	if (rc == 0)
		rc = r->rc ? r->rc : tfs_store_claims_settle(is_local);
	tfs_ns_unlock();
	free(r);
	return rc;
}
