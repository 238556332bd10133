/* The lifetime of the tensors this daemon holds memory for: create, shape, resize, owner,
 * open and close, unlink and rename, reference counts (docs/contract.md) and the records that
 * mirror them; resync after Redis came back, shutdown. Every function here runs under
 * tfs_tensors.ns. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/conn.h"
#include "mem/devices.h"
#include "store/mirror.h"
#include "store/store.h"
#include "tensors/resync.h"
#include "tensors/quota.h"
#include "tensors/tensor.h"
#include "store/writer.h"
#include "dtype.h"
#include "tier.h"
#include "log.h"
#include "kernel/node.h"
#include "util/proc.h"
#include "store/schema.h"
#include "store/records.h"
#include "store/restore.h"
#include "store/claims.h"
#include "util/clock.h"
#include "mem/backend.h"
#include "mem/tiers_backend.h"
#include "tensors/tensors.h"


int64_t tfs_tensor_refcount(const struct tfsd_tensor *t)
{
	int64_t n = t->linked + (t->pinned_until != 0) + t->opens;

	for (struct tfs_holder *h = t->holders; h; h = h->next)
		n += h->count;
	return n;
}

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* Never backwards: a change made under ns after the write (a reshape) keeps its later
 * ctime, which clients compare to know their cached metadata is stale. */
void tfs_tensor_fold_times(struct tfsd_tensor *t)
{
	int64_t w = __atomic_exchange_n(&t->wtime_ns, 0, __ATOMIC_RELAXED);
	struct timespec ts = { (time_t)(w / 1000000000), (long)(w % 1000000000) };

	if (!w)
		return;
	if (w > ns_of(&t->mtime))
		t->mtime = ts;
	if (w > ns_of(&t->ctime))
		t->ctime = ts;
}

/* replace: the key may hold a stale record, whose other fields must go. */
static int save(struct tfsd_tensor *t, int replace)
{
	tfs_tensor_fold_times(t);
	t->meta.refcount = tfs_tensor_refcount(t);
	t->meta.mtime = t->mtime.tv_sec;
	t->meta.ctime_ns = (int64_t)t->ctime.tv_sec * 1000000000 + t->ctime.tv_nsec;
	t->dirty = 0;
	return tfs_store_save(t->key, &t->meta, replace);
}

int tfs_tensor_save(struct tfsd_tensor *t)
{
	return save(t, 0);
}

static int save_refcount(struct tfsd_tensor *t)
{
	t->meta.refcount = tfs_tensor_refcount(t);
	return tfs_store_save_refcount(t->key, t->meta.refcount);
}


static void tensor_free(struct tfsd_tensor *t)
{
	struct tfs_holder *h, *next;

	for (h = t->holders; h; h = next) {
		next = h->next;
		tfs_quota_holds(h->uid, -h->count);
		free(h);
	}
	/* A read holds io until its reply is written, and the reader, woken by that reply,
	 * may close the file and so free the tensor before the read lets go: wait for it. */
	pthread_rwlock_wrlock(&t->io);
	pthread_rwlock_unlock(&t->io);
	pthread_rwlock_destroy(&t->io);
	tfs_tensor_resync_forget(t);
	free(t->name);
	free(t->key);
	free(t);
}

/* A tensor not in the table yet: its memory and the struct. */
static void struct_free(struct tfsd_tensor *t)
{
	if (t->alloc)
		tfs_mem.ops->free(tfs_mem.be, t->alloc);
	tensor_free(t);
}

/* The count reached 0: memory, record and struct go. */
static void destroy(struct tfsd_tensor *t)
{
	tfs_table_remove(t);
	if (t->alloc)
		tfs_mem.ops->free(tfs_mem.be, t->alloc);
	tfs_store_delete(t->key);
	tfs_log(LOG_DEBUG, "freed %s (%llu bytes)", t->name, (unsigned long long)t->meta.bytes);
	tensor_free(t);
}

void tfs_tensor_drop_if_unused(struct tfsd_tensor *t)
{
	if (t->moving)
		return;         /* the mover drops it when the move ends */
	if (tfs_tensor_refcount(t) == 0)
		destroy(t);
	else
		save_refcount(t);
}

/* What refuses a create before its name is claimed. */
static int create_check(const char *name, int device, uid_t uid, char *key, size_t size)
{
	int rc;

	if ((rc = tfs_quota_path(name)) || (rc = tfs_key(key, size, "tensor", name)))
		return rc;
	if (device == TFS_DEVICE_CPU ? !tfs_mem.cpu_served :
	    device < 0 || device >= tfs_mem.ops->device_count(tfs_mem.be))
		return -EINVAL;
	if (tfs_table_find_key(key))
		return -EEXIST;
	return tfs_quota_tensor_check(uid);
}

int tfs_tensor_claim(const char *name, int device, uid_t uid, const struct tfs_dirrec *parent_rec,
		     struct tfs_store_claim **claim)
{
	char key[TFS_KEYMAX];
	int rc = create_check(name, device, uid, key, sizeof(key));

	return rc ? rc : tfs_store_link_send(name, 't', parent_rec, claim);
}

void tfs_tensor_claim_drop(const char *name, struct tfs_store_claim *claim)
{
	if (tfs_store_link_wait(name, 't', claim) == 0)
		tfs_store_unlink(name);
}

static int shape_set(struct tfsd_tensor *t, tfs_dtype dt, const struct tfs_shape *sh,
		     int busy_check);

uint64_t tfs_tensor_dir_id(const char *parent, const struct tfs_dirrec *d)
{
	uint64_t h = 14695981039346656037ULL;

	if (d->ino)
		return d->ino;
	/* A record without an inode number (made by an older daemon or by a resync): its
	 * path, hashed into the upper half of the range, where random inode numbers fall
	 * as rarely as anywhere else. */
	for (const unsigned char *p = (const unsigned char *)parent; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return (h | 1ull << 62) & INT64_MAX;
}

/* The directory identity of a tensor named name whose parent's record is parent_rec. */
static uint64_t dir_of(const char *name, const struct tfs_dirrec *parent_rec)
{
	char parent[TFS_PATH_MAX];
	const char *base;

	tfs_split(name, parent, sizeof(parent), &base);
	return tfs_tensor_dir_id(parent, parent_rec);
}

/* claim NULL: the name is ours already (tfs_tensor_create_linked). */
static int create_made(struct tfs_store_claim *claim, const char *name, tfs_dtype dt,
		       const struct tfs_shape *sh, int device, uid_t uid, gid_t gid,
		       mode_t mode, const struct tfs_dirrec *parent_rec, int open,
		       struct tfsd_tensor **out)
{
	char key[TFS_KEYMAX];
	struct tfsd_tensor *t;
	struct timespec now;
	int rc, shaped = 0;

	if ((rc = create_check(name, device, uid, key, sizeof(key)))) {
		if (claim)
			tfs_tensor_claim_drop(name, claim);
		else
			tfs_store_unlink(name);
		return rc;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		rc = -ENOMEM;
		goto fail_name;
	}
	t->name = strdup(name);
	t->key = strdup(key);
	if (!t->name || !t->key) {
		rc = -ENOMEM;
		goto fail_struct_name;
	}
	pthread_rwlock_init(&t->io, NULL);
	clock_gettime(CLOCK_REALTIME, &now);
	t->atime = t->mtime = t->ctime = now;
	t->meta.dtype = dt;
	tfs_shape_1d(&t->meta.shape, 0);
	t->meta.device = device;
	t->meta.ctime = now.tv_sec;
	snprintf(t->meta.node, sizeof(t->meta.node), "%s", tfs_schema.node);
	snprintf(t->meta.backend, sizeof(t->meta.backend), "%s", tfs_mem_backend_name(device));
	t->meta.mode = mode & 07777;
	t->meta.ino = tfs_node_new_ino();
	t->meta.uid = uid;
	t->meta.gid = gid;
	t->meta.dir = dir_of(name, parent_rec);
	t->linked = 1;
	t->opens = open;
	/* With a claim on its way, the memory is made meanwhile: zero-filling a small tensor
	 * costs about as much as that round trip. */
	if (sh)
		shaped = shape_set(t, dt, sh, 0);
	if (claim) {
		rc = tfs_store_link_wait(name, 't', claim);
		claim = NULL;
		if (rc)
			goto fail_struct;     /* not ours: nothing to give back */
	}
	rc = shaped;
	/* A record this node left behind under the same name is stale by now. Only once the
	 * name is ours: the record under it may be another node's until then. */
	if (rc || (rc = save(t, 1)))
		goto fail_struct_name;
	tfs_table_insert(t);
	*out = t;
	return 0;
fail_struct_name:
	struct_free(t);
fail_name:
	/* The name is ours (or its claim still on the way): give it back. */
	if (claim)
		tfs_tensor_claim_drop(name, claim);
	else
		tfs_store_unlink(name);
	return rc;
fail_struct:
	struct_free(t);
	return rc;
}

int tfs_tensor_create_claimed(struct tfs_store_claim *claim, const char *name, tfs_dtype dt,
			      const struct tfs_shape *sh, int device, uid_t uid, gid_t gid,
			      mode_t mode, const struct tfs_dirrec *parent_rec, int open,
			      struct tfsd_tensor **out)
{
	return create_made(claim, name, dt, sh, device, uid, gid, mode, parent_rec, open, out);
}

static void attach(struct tfsd_tensor *t, struct tfs_file *f)
{
	f->ap = (struct tfs_alloc_params){ t->meta.device, t->meta.uid, t->meta.gid,
					   t->meta.mode, t->meta.dir };
	f->t = t;
	f->next = t->files;
	t->files = f;
}

int tfs_tensor_create_linked(const char *name, tfs_dtype dt, int device, uid_t uid, gid_t gid,
			     mode_t mode, const struct tfs_dirrec *parent_rec, struct tfs_file *f,
			     struct tfsd_tensor **out)
{
	/* Created open, so the record's first write counts the open. */
	int rc = create_made(NULL, name, dt, NULL, device, uid, gid, mode, parent_rec, f != NULL,
			     out);

	if (rc == 0 && f)
		attach(*out, f);
	return rc;
}

static int export(struct tfsd_tensor *t)
{
	int rc;

	if (!t->alloc) {
		t->meta.has_handle = 0;
		t->meta.ipc_offset = 0;
		memset(t->meta.ipc_handle, 0, sizeof(t->meta.ipc_handle));
		return 0;
	}
	rc = tfs_mem.ops->export_handle(tfs_mem.be, t->alloc, t->meta.ipc_handle,
					 &t->meta.ipc_offset);
	t->meta.has_handle = rc == 0;
	return rc;
}

static int params_are(const struct tfsd_tensor *t, const struct tfs_alloc_params *ap)
{
	return ap->device == t->meta.device && ap->uid == t->meta.uid && ap->gid == t->meta.gid &&
	       ap->mode == t->meta.mode && ap->dir == t->meta.dir;
}

/* Makes the allocation hold exactly bytes, keeping what fits. Takes the io lock alone so
 * no read or write copies from memory that is moving. g: memory made before
 * (tfs_tensor_grow_prepare), taken (g->a NULL) when t has none, g's is of bytes and t's
 * parameters are still g's; NULL for none. */
static int realloc_pre(struct tfsd_tensor *t, uint64_t bytes, struct tfs_grow *g)
{
	const struct tfs_backend_ops *be = tfs_mem.ops;
	struct tfs_alloc *a;
	int rc = 0;

	if (bytes == t->meta.bytes)
		return 0;
	if (t->moving)
		return -EBUSY;
	pthread_rwlock_wrlock(&t->io);
	if (bytes == 0) {
		be->free(tfs_mem.be, t->alloc);
		t->alloc = NULL;
	} else if (!t->alloc && g && g->a && g->bytes == bytes && params_are(t, &g->ap)) {
		t->alloc = g->a;
		g->a = NULL;
	} else if (!t->alloc) {
		/* A directory's default may name a device a later start no longer serves. */
		rc = tfs_device_served(t->meta.device) ?
		     be->alloc(tfs_mem.be, t->meta.device, bytes, t->meta.uid, t->meta.gid,
			       t->meta.mode, t->meta.dir, &a) : -ENODEV;
		if (rc == 0)
			t->alloc = a;
	} else {
		rc = be->resize(tfs_mem.be, &t->alloc, bytes);
	}
	if (rc == 0) {
		t->meta.bytes = bytes;
		rc = export(t);
	}
	pthread_rwlock_unlock(&t->io);
	if (rc == -ENOMEM)
		rc = -ENOSPC;
	return rc;
}

static int realloc_bytes(struct tfsd_tensor *t, uint64_t bytes)
{
	return realloc_pre(t, bytes, NULL);
}

/* The backend gives t's memory a new owner, mode or directory (its block's key). The CUDA
 * backend may move a pooled tensor to another block: no copy may run meanwhile, and the
 * handle is taken again. -errno with nothing changed when the backend refuses (*moved 0);
 * else the export's result, the memory having moved (*moved 1). */
static int rekey(struct tfsd_tensor *t, uid_t uid, gid_t gid, mode_t mode, uint64_t dir,
		 unsigned flags, int *moved)
{
	const struct tfs_backend_ops *be = tfs_mem.ops;
	int rc;

	*moved = 1;
	if (!t->alloc || !be->set_owner)
		return 0;
	if (t->moving) {
		*moved = 0;
		return -EBUSY;
	}
	pthread_rwlock_wrlock(&t->io);
	rc = be->set_owner(tfs_mem.be, t->alloc, uid, gid, mode, dir, flags);
	*moved = rc == 0;
	if (*moved)
		rc = export(t);
	pthread_rwlock_unlock(&t->io);
	return rc == -ENOMEM ? -ENOSPC : rc;
}

int tfs_tensor_set_owner(struct tfsd_tensor *t, uid_t uid, gid_t gid, mode_t mode)
{
	int moved, rc = rekey(t, uid, gid, mode, t->meta.dir, 0, &moved);

	if (!moved)
		return rc;      /* refused by the backend: nothing changed */
	if (uid != t->meta.uid) {
		tfs_quota_tensors(t->meta.uid, -1);
		tfs_quota_tensors(uid, 1);
		tfs_mirror_owner(t->key, uid);
	}
	t->meta.uid = uid;
	t->meta.gid = gid;
	t->meta.mode = mode;
	return rc;
}

static int has_writer(const struct tfsd_tensor *t)
{
	for (const struct tfs_file *f = t->files; f; f = f->next)
		if (f->writable)
			return 1;
	return t->holders != NULL;
}

/* The record of a tensor moved between tiers names its new memory before the old goes
 * (backend.h move_sum): written and waited for, so that a crash at any point leaves a
 * record naming memory that is whole. Runs on the mover's thread, io held exclusive:
 * the one place a thread holding io takes ns (tensors.h), which is why every path that
 * takes a tensor's io under ns first refuses a moving one. The wait for Redis runs with
 * ns released. */
struct tier_commit {
	struct tfsd_tensor *t;
	int device;
	const uint64_t *sum;
	int rc, done;
};

/* The tensor's metadata follows its memory (device, backend, handle, sum, ctime). Caller
 * holds ns and io. */
static int follow(struct tfsd_tensor *t, int device, uint64_t sum)
{
	int rc = export(t);

	/* Writers it keeps (the mover's own open or hold) may change the bytes asleep. */
	t->meta.sum = device == TFS_DEVICE_CPU && !has_writer(t) ? sum : 0;
	t->meta.device = device;
	snprintf(t->meta.backend, sizeof(t->meta.backend), "%s", tfs_mem_backend_name(device));
	clock_gettime(CLOCK_REALTIME, &t->ctime);
	return rc ? rc : tfs_tensor_save(t);
}

static void tier_commit(void *arg)
{
	struct tier_commit *c = arg;
	struct tfsd_tensor *t = c->t;

	c->done = 1;
	tfs_ns_lock();
	c->rc = follow(t, c->device, *c->sum);
	tfs_ns_unlock();
	/* Made: the answer says so. Redis gone meanwhile holds the record back until it
	 * returns; a crash before then adopts neither object (the record outlives both). */
	if (c->rc == 0 && tfs_writer_sync())
		tfs_log(LOG_WARNING, "%s: moved, but Redis has not got its record yet", t->name);
}

/* The copy of a move, ns released: t->moving keeps t alive and everything that would
 * take its io under ns away. Returns with ns held again. */
static int move_unlocked(struct tfsd_tensor *t, int device, uint64_t *sum)
{
	const struct tfs_backend_ops *be = tfs_mem.ops;
	struct tier_commit c = { .t = t, .device = device, .sum = sum };
	char tier[TFS_TIER_NAME_MAX];
	int rc;

	t->moving = 1;
	tfs_ns_unlock();
	pthread_rwlock_wrlock(&t->io);
	if (be->move_sum) {
		rc = be->move_sum(tfs_mem.be, t->alloc, device, sum, tier_commit, &c);
	} else {
		rc = be->move(tfs_mem.be, t->alloc, device);
		*sum = 0;
	}
	if (rc == 0 && c.done) {
		pthread_rwlock_unlock(&t->io);
		tfs_ns_lock();
		rc = c.rc;
	} else if (rc == 0) {
		/* No commit (a move within one side): the record follows, io still held. */
		tfs_ns_lock();
		rc = follow(t, device, *sum);
		pthread_rwlock_unlock(&t->io);
	} else {
		/* Nothing changed. */
		pthread_rwlock_unlock(&t->io);
		tfs_ns_lock();
		if (rc == -ENOMEM)
			rc = -ENOSPC;
		if (rc == -EBADMSG)
			tfs_log(LOG_ERR, "%s: its bytes in host memory are not those that went to "
				"sleep (checksum mismatch): it stays in the host tier, not moved to "
				"device %s", t->name, tfs_tier_name(device, tier, sizeof(tier)));
	}
	t->moving = 0;
	if (tfs_tensor_refcount(t) == 0)
		destroy(t);     /* unlinked and closed while it moved */
	return rc;
}

int tfs_tensor_set_device(struct tfsd_tensor *t, int device, pid_t pid)
{
	const struct tfs_backend_ops *be = tfs_mem.ops;
	uint64_t sum;
	int rc;

	if (!tfs_device_served(device))
		return -EINVAL;
	if (t->moving)
		return -EBUSY;
	if (device == t->meta.device)
		return 0;
	if (!t->alloc) {
		t->meta.sum = 0;
		t->meta.device = device;
		snprintf(t->meta.backend, sizeof(t->meta.backend), "%s",
			 tfs_mem_backend_name(device));
		clock_gettime(CLOCK_REALTIME, &t->ctime);
		return tfs_tensor_save(t);
	}
	/* Others' mappings name the old memory: it never moves under them. */
	if ((!be->move && !be->move_sum) || (pid && tfs_tensor_busy(t, pid)))
		return -EBUSY;
	if ((rc = tfs_conn_ok()))
		return rc;
	/* Waking from the host tier: the bytes must be those that went to sleep. */
	sum = t->meta.device == TFS_DEVICE_CPU ? t->meta.sum : 0;
	return move_unlocked(t, device, &sum);
}

int tfs_tensor_set_dir(struct tfsd_tensor *t, uint64_t dir, pid_t pid)
{
	/* Memory others have mapped may stay where it is (a lone tensor's block is retired
	 * to the new key) but never moves under them. */
	unsigned flags;
	int moved, rc;

	if (dir == t->meta.dir)
		return 0;
	flags = t->alloc && pid && tfs_tensor_busy(t, pid) ? TFS_BE_NOMOVE : 0;
	rc = rekey(t, t->meta.uid, t->meta.gid, t->meta.mode, dir, flags, &moved);
	if (!moved)
		return rc;
	t->meta.dir = dir;
	/* The record, before the rename moves it whole: its handle may have changed, which
	 * clients learn from its ctime. */
	clock_gettime(CLOCK_REALTIME, &t->ctime);
	return rc ? rc : tfs_tensor_save(t);
}

int tfs_tensor_place(struct tfsd_tensor *t, const char *name, pid_t pid)
{
	char parent[TFS_PATH_MAX];
	const char *base;
	struct tfs_dirrec d;
	int rc;

	tfs_split(name, parent, sizeof(parent), &base);
	if ((rc = tfs_store_dir(parent, &d)))
		return rc;
	return tfs_tensor_set_dir(t, tfs_tensor_dir_id(parent, &d), pid);
}

/* -EFBIG when bytes is more than t's device could ever hold (or than a file size can say),
 * as for any file that could never be that large here; ENOSPC stays for sizes that fit
 * but not now (pjdfstest truncate/12). Shapes and truncates are both bounded by it, so
 * no backend is asked for a size whose page rounding or charge would overflow. */
static int never_fits(const struct tfsd_tensor *t, uint64_t bytes)
{
	struct tfs_backend_stats st;

	if (bytes > (uint64_t)INT64_MAX)
		return -EFBIG;
	tfs_devices_stats(t->meta.device, &st);
	return st.total && bytes > st.total ? -EFBIG : 0;
}

/* tfs_tensor_shape but the record write. */
static int shape_set(struct tfsd_tensor *t, tfs_dtype dt, const struct tfs_shape *sh,
		     int busy_check)
{
	uint64_t bytes;
	int rc;

	if (tfs_shape_bytes(sh, tfs_dtype_size(dt), &bytes))
		return -EINVAL;
	/* ENOSPC for a shape, as the backend would answer (a truncate says EFBIG); checked
	 * here so that no backend is asked for such a size. */
	if (bytes > t->meta.bytes && never_fits(t, bytes))
		return -ENOSPC;
	if (bytes != t->meta.bytes && busy_check && tfs_tensor_busy(t, (pid_t)busy_check))
		return -EBUSY;
	if ((rc = tfs_conn_ok()))
		return rc;
	rc = realloc_bytes(t, bytes);
	if (rc)
		return rc;
	t->meta.dtype = dt;
	t->meta.shape = *sh;
	clock_gettime(CLOCK_REALTIME, &t->ctime);
	t->mtime = t->ctime;
	return 0;
}

int tfs_tensor_shape(struct tfsd_tensor *t, tfs_dtype dt, const struct tfs_shape *sh,
		     int busy_check)
{
	int rc = shape_set(t, dt, sh, busy_check);

	return rc ? rc : tfs_tensor_save(t);
}

int tfs_tensor_resize_pre(struct tfsd_tensor *t, uint64_t bytes, pid_t pid,
			  struct tfs_grow *g)
{
	size_t isz = tfs_dtype_size(t->meta.dtype);
	int rc;

	/* Memory that others may have mapped is never moved or shrunk under them; it may
	 * grow where it stays (a VMM allocation with room, docs/vmm.md). */
	if (t->alloc && bytes != t->meta.bytes && tfs_tensor_busy(t, pid) &&
	    !(bytes > t->meta.bytes && tfs_mem.ops->grows_in_place &&
	      tfs_mem.ops->grows_in_place(tfs_mem.be, t->alloc, bytes)))
		return -EBUSY;
	if (bytes > t->meta.bytes && (rc = never_fits(t, bytes)))
		return rc;
	if ((rc = tfs_conn_ok()))
		return rc;
	rc = realloc_pre(t, bytes, g);
	if (rc)
		return rc;
	/* A file's size need not be a whole number of elements: then it is bytes. */
	if (bytes % isz) {
		tfs_log(LOG_INFO, "%s: %llu bytes is not a whole number of %s, dtype is now u8",
			t->name, (unsigned long long)bytes, tfs_dtype_name(t->meta.dtype));
		t->meta.dtype = TFS_U8;
		isz = 1;
	}
	tfs_shape_1d(&t->meta.shape, bytes / isz);
	clock_gettime(CLOCK_REALTIME, &t->mtime);
	t->ctime = t->mtime;
	return tfs_tensor_save(t);
}

int tfs_tensor_resize(struct tfsd_tensor *t, uint64_t bytes, pid_t pid)
{
	return tfs_tensor_resize_pre(t, bytes, pid, NULL);
}

void tfs_tensor_grow_prepare(const struct tfs_file *f, uint64_t bytes, struct tfs_grow *g)
{
	const struct tfs_alloc_params *ap = &f->ap;

	g->a = NULL;
	g->bytes = bytes;
	g->ap = *ap;
	if (bytes == 0 || bytes > TFS_GROW_PREPARE_MAX || !tfs_device_served(ap->device) ||
	    tfs_mem.ops->alloc(tfs_mem.be, ap->device, bytes, ap->uid, ap->gid, ap->mode, ap->dir,
			       &g->a))
		g->a = NULL;
}

void tfs_tensor_grow_discard(struct tfs_grow *g)
{
	if (g->a)
		tfs_mem.ops->free(tfs_mem.be, g->a);
	g->a = NULL;
}

void tfs_tensor_unsum(struct tfsd_tensor *t)
{
	if (!t->meta.sum)
		return;
	t->meta.sum = 0;
	tfs_log(LOG_INFO, "%s: may be written in the host tier: its next wake is unchecked",
		t->name);
	tfs_tensor_save(t);
}

int tfs_tensor_get_open(struct tfsd_tensor *t, struct tfs_file *f)
{
	/* Its handle is about to change: no new mapping of the old memory. */
	if (t->moving)
		return -EBUSY;
	attach(t, f);
	if (f->writable)
		tfs_tensor_unsum(t);
	t->opens++;
	return save_refcount(t);
}

void tfs_tensor_put_open(struct tfs_file *f)
{
	struct tfsd_tensor *t = f->t;
	struct tfs_file **pp;

	for (pp = &t->files; *pp; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	}
	t->opens--;
	/* Still referenced: the whole record holds the refcount too, which is all that
	 * tfs_tensor_drop_if_unused would write. */
	if (t->dirty && tfs_tensor_refcount(t) > 0) {
		tfs_tensor_save(t);
		return;
	}
	tfs_tensor_drop_if_unused(t);
}

/* The process a thread belongs to. When the thread is gone (or /proc says nothing), tid
 * itself: then only that very thread counts as the same process. */
static pid_t tgid_of(pid_t tid)
{
	pid_t g = tfs_proc_tgid(tid);

	return g > 0 ? g : tid;
}

int tfs_tensor_busy(const struct tfsd_tensor *t, pid_t pid)
{
	pid_t me = 0;

	if (t->holders)
		return 1;
	/* By process, not thread: a multithreaded program is not busy against itself. The
	 * lookups run only here, on a size change, not on every open. */
	for (const struct tfs_file *f = t->files; f; f = f->next) {
		if (f->pid == pid)
			continue;
		if (!me)
			me = tgid_of(pid);
		if (tgid_of(f->pid) != me)
			return 1;
	}
	return 0;
}

static void unpin(struct tfsd_tensor *t);

int tfs_tensor_unlink(struct tfsd_tensor *t, char **ukey)
{
	char *key;
	int rc;

	if (ukey)
		*ukey = NULL;
	/* Its name went already: t->name may be another tensor's by now. */
	if (!t->linked)
		return -ENOENT;
	if ((rc = tfs_conn_ok()))
		return rc;
	/* Before the name goes: a tensor still open or held that could not be tracked by a
	 * key of its own would have to be freed under those who hold it. */
	key = malloc(TFS_KEYMAX);
	if (!key)
		return -ENOMEM;
	rc = tfs_store_unlink(t->name);
	if (rc) {
		free(key);
		return rc;
	}
	t->linked = 0;
	if (tfs_tensor_refcount(t) == 0 && !t->moving) {
		free(key);
		destroy(t);
		return 0;
	}
	/* Still open or held: the name is free for a new tensor at once, so the record moves
	 * to a key of its own until the last reference goes. */
	tfs_store_unlinked_key(key, TFS_KEYMAX, ++tfs_tensors.table.unlinked_seq);
	tfs_store_rename(t->key, key);
	tfs_table_remove(t);
	free(t->key);
	t->key = key;
	tfs_table_insert(t);
	save_refcount(t);
	if (ukey && !(*ukey = strdup(t->key)))
		unpin(t);    /* no key to pin its node to: kept only for what else holds it */
	return 0;
}

/* How long the kernel may take to forget a replaced tensor's node before the daemon stops
 * waiting (checked once a second by the reaper, so up to a second more): the FORGET
 * comes as the rename returns, once no path walk holds the old inode, on kernels that
 * drop the link count of a rename's target (5.17 and later); older ones keep the inode
 * cached. */
#define PIN_NS (2 * 1000000000LL)

int tfs_tensor_unlink_replaced(struct tfsd_tensor *t, char **ukey)
{
	int rc;

	t->pinned_until = tfs_mono_ns() + PIN_NS;
	rc = tfs_tensor_unlink(t, ukey);
	if (rc)
		t->pinned_until = 0;     /* nothing changed: still linked */
	return rc;
}

static void unpin(struct tfsd_tensor *t)
{
	if (!t->pinned_until)
		return;
	t->pinned_until = 0;
	tfs_tensor_drop_if_unused(t);
}

void tfs_tensor_unpin_key(const char *key)
{
	struct tfsd_tensor *t = tfs_table_find_key(key);

	if (t)
		unpin(t);
}

int tfs_tensor_pin_expired(struct tfsd_tensor *t, int64_t now_ns)
{
	if (!t->pinned_until || t->pinned_until > now_ns)
		return 0;
	t->pinned_until = 0;
	return 1;
}

void tfs_tensor_unpin_forgotten(void)
{
	for (char *k; (k = tfs_node_take_unpinned()); free(k))
		tfs_tensor_unpin_key(k);
}

/* store: the record moves too (a tensor's own rename); else it moved already (a tree). */
static int rename_to(struct tfsd_tensor *t, const char *newname, int store)
{
	char key[TFS_KEYMAX], *name, *k;
	int rc;

	if ((rc = tfs_key(key, sizeof(key), "tensor", newname)))
		return rc;
	name = strdup(newname);
	k = strdup(key);
	if (!name || !k) {
		free(name);
		free(k);
		return -ENOMEM;
	}
	if (store && (rc = tfs_store_rename(t->key, key))) {
		free(name);
		free(k);
		return rc;
	}
	tfs_table_remove(t);
	free(t->name);
	free(t->key);
	t->name = name;
	t->key = k;
	tfs_table_insert(t);
	if (store)
		clock_gettime(CLOCK_REALTIME, &t->ctime);
	return 0;
}

int tfs_tensor_rename(struct tfsd_tensor *t, const char *newname)
{
	return rename_to(t, newname, 1);
}

int tfs_tensor_renamed(struct tfsd_tensor *t, const char *newname)
{
	return rename_to(t, newname, 0);
}

static void shutdown_one(struct tfsd_tensor *t, void *arg)
{
	(void)arg;
	if (t->linked)
		tfs_store_unlink(t->name);
	destroy(t);
}

void tfs_tensor_shutdown(void)
{
	tfs_table_foreach(shutdown_one, NULL);
	free(tfs_tensors.table.buckets);
	free(tfs_tensors.table.by_ino);
	tfs_tensors.table.buckets = tfs_tensors.table.by_ino = NULL;
}
