/* The FUSE operations on directories and names: lookup, mkdir, rmdir, unlink, rename,
 * readdir, statfs. The Redis side of each (entries, records, tree moves) is store.c's;
 * the node ids the kernel knows follow here (node.c). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem/devices.h"
#include "log.h"
#include "fuse/ops.h"
#include "store/schema.h"
#include "store/records.h"
#include "store/claims.h"
#include "util/clock.h"
#include "tensors/tensors.h"
#include "store/conn.h"
#include "store/writer.h"
#include "tensors/quota.h"

void tfs_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	struct tfs_target x;
	struct stat st;
	char *path;
	int rc;

	/* Over NAME_MAX: ENAMETOOLONG, as every Linux filesystem says (pjdfstest chmod/02 and others). */
	rc = tfs_node_child_path(parent, name, &path);
	if (rc) {
		fuse_reply_err(req, rc == -ESTALE ? ENOENT : -rc);
		return;
	}
	tfs_log(LOG_DEBUG, "LOOKUP /%s", path);
	tfs_ns_lock();
	rc = tfs_ops_resolve_path(path, &x);
	if (rc == 0) {
		tfs_ops_stat(&x, 0, &st);
		rc = tfs_ops_entry(parent, name, &st, &e);
	}
	tfs_ns_unlock();
	free(path);
	if (rc) {
		/* A miss is never kept: a name made elsewhere shows at once. */
		fuse_reply_err(req, -rc);
		return;
	}
	tfs_ops_reply_entry(req, &e);
}

/* A tensor replaced by a rename goes once the kernel forgets its node (node.h). */
static void unpin_forgotten(void)
{
	if (!tfs_node_unpinned_pending())
		return;
	tfs_ns_lock();
	tfs_tensor_unpin_forgotten();
	tfs_ns_unlock();
}

void tfs_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	tfs_node_forget(ino, nlookup);
	fuse_reply_none(req);
	unpin_forgotten();
}

void tfs_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		tfs_node_forget(forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
	unpin_forgotten();
}

void tfs_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct tfs_target x = { .kind = 'd' };
	struct fuse_entry_param e;
	struct tfs_dirrec pd;
	struct stat st;
	char *path, ppath[TFS_PATH_MAX];
	const char *base;
	int rc;

	if ((rc = tfs_node_child_path(parent, name, &path))) {
		fuse_reply_err(req, -rc);
		return;
	}
	tfs_split(path, ppath, sizeof(ppath), &base);
	tfs_ns_lock();
	rc = tfs_quota_path(path);
	if (rc == 0)
		rc = tfs_store_dir(ppath, &pd);
	if (rc == 0)
		rc = tfs_store_link(path, 'd');
	if (rc == 0) {
		x.d.mode = mode & 07777 & ~ctx->umask;
		x.d.uid = ctx->uid;
		x.d.gid = ctx->gid;
		tfs_store_dir_inherit(&pd, 1, &x.d.gid, &x.d.mode);
		x.d.ctime = x.d.mtime = tfs_now();
		x.d.ino = tfs_node_new_ino();
		rc = tfs_store_dir_write(path, &x.d);
		if (rc)
			tfs_store_unlink(path);
		else
			tfs_ops_dir_changed(path, 1);
	}
	if (rc == 0) {
		tfs_ops_stat(&x, 0, &st);
		rc = tfs_ops_entry(parent, name, &st, &e);
	}
	tfs_ns_unlock();
	free(path);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	/* The entry is claimed in Redis at once, the record written behind: another node
	 * that finds the entry before the record says ENOENT. The record goes before the
	 * reply, so a directory made here is everyone's when mkdir returns; a failure is
	 * Redis away, and the record then goes when it is back, as every write does. */
	tfs_writer_sync();
	tfs_ops_reply_entry(req, &e);
}

void tfs_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	char *path;
	int rc;

	if ((rc = tfs_node_child_path(parent, name, &path))) {
		fuse_reply_err(req, -rc);
		return;
	}
	tfs_ns_lock();
	rc = tfs_store_rmdir(path);
	if (rc == 0) {
		tfs_ops_dir_changed(path, -1);
		tfs_node_detach(parent, name, NULL);
	}
	tfs_ns_unlock();
	free(path);
	fuse_reply_err(req, -rc);
}

/* Removes the name path; *ukey: where its tensor lives on while still open or held
 * (malloc'd), or NULL. Caller holds ns. */
static int unlink_name(const char *path, char **ukey)
{
	struct tfsd_tensor *t = tfs_table_find(path);
	struct tfs_meta m;
	int rc;

	*ukey = NULL;
	if (t)
		return tfs_tensor_unlink(t, ukey);
	rc = tfs_store_type(path);
	if (rc < 0)
		return rc;
	if (rc == 'd')
		return -EISDIR;
	rc = tfs_store_tensor(path, &m);
	if (rc == 0 && strcmp(m.node, tfs_schema.node))
		return -EREMOTE;
	if (rc == -EIO)
		return rc;
	/* A record garbled by hand, a stale one of this node, or a dangling entry: removing
	 * the name is what rm asked for, and there is no memory behind it. */
	tfs_log(LOG_NOTICE, "%s: removing a record with no tensor behind it", path);
	return tfs_store_remove_tensor(path);
}

void tfs_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	char *path, *ukey = NULL;
	int rc;

	if ((rc = tfs_node_child_path(parent, name, &path))) {
		fuse_reply_err(req, -rc);
		return;
	}
	tfs_ns_lock();
	rc = unlink_name(path, &ukey);
	if (rc == 0) {
		tfs_ops_dir_changed(path, 0);
		/* The kernel keeps the inode of an open file: its node serves it through ukey.
		 * Under ns, as every change of the node table that follows a name. */
		tfs_node_detach(parent, name, ukey);
	}
	tfs_ns_unlock();
	free(path);
	free(ukey);
	fuse_reply_err(req, -rc);
}

void tfs_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	(void)link; (void)parent; (void)name;
	fuse_reply_err(req, EPERM);    /* only tensors live here */
}

void tfs_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	(void)ino; (void)newparent; (void)newname;
	fuse_reply_err(req, EPERM);    /* a tensor has one name; links would alias refcounts */
}

/* Whether a and b are in one directory. */
static int same_dir(const char *a, const char *b)
{
	const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
	size_t la = sa ? (size_t)(sa - a) : 0, lb = sb ? (size_t)(sb - b) : 0;

	return la == lb && strncmp(a, b, la) == 0;
}

/* rename's checks and moves, under ns. *ukey: where a replaced tensor lives on. pid: the
 * caller's, for tfs_tensor_place's EBUSY. */
static int rename_paths(const char *from, const char *to, unsigned int flags, pid_t pid,
			char **ukey)
{
	struct tfs_target src, dst;
	size_t fl = strlen(from);
	int rc, dst_rc, replaced_dir = 0, placed = 0;
	uint64_t old_dir = 0;

	*ukey = NULL;
	/* A tree's deeper paths are checked by its move (tfs_tensor_move_dir). Nothing is
	 * renamed while a tree move is unsettled: the names may have moved in Redis. */
	if ((rc = tfs_quota_path(to)) || (rc = tfs_conn_ok()))
		return rc;
	rc = tfs_ops_resolve_path(from, &src);
	if (rc)
		return rc;
	if (src.kind == 'r' || src.kind == 'g')
		return src.kind == 'r' ? -EREMOTE : -EIO;
	if (src.kind == 'd' && strncmp(to, from, fl) == 0 && to[fl] == '/')
		return -EINVAL;       /* into its own subtree */
	dst_rc = tfs_ops_resolve_path(to, &dst);
	if (dst_rc && dst_rc != -ENOENT)
		return dst_rc;
	if (dst_rc == 0) {
		if (flags & RENAME_NOREPLACE)
			return -EEXIST;
		if (src.kind == 'd' && dst.kind != 'd')
			return -ENOTDIR;
		if (src.kind != 'd' && dst.kind == 'd')
			return -EISDIR;
		if (dst.kind == 'r' || dst.kind == 'g')
			return dst.kind == 'r' ? -EREMOTE : -EIO;
	}
	/* Into another directory, a tensor's memory first moves out of blocks its old
	 * neighbours' readers map; before anything else changes, so that a refusal leaves
	 * everything as it was. */
	if (src.kind != 'd' && !same_dir(from, to)) {
		old_dir = src.t->meta.dir;
		placed = 1;
		if ((rc = tfs_tensor_place(src.t, to, pid)))
			goto unplace;
	}
	if (dst_rc == 0) {
		rc = dst.kind == 'd' ? tfs_store_rmdir(to) : tfs_tensor_unlink_replaced(dst.t, ukey);
		if (rc)
			goto unplace;
		replaced_dir = dst.kind == 'd';
	}
	if (src.kind == 'd') {
		rc = tfs_tensor_move_dir(from, to);
	} else if ((rc = tfs_store_link(to, 't')) == 0) {
		rc = tfs_tensor_rename(src.t, to);
		if (rc)
			tfs_store_unlink(to);
		else
			rc = tfs_store_unlink(from);
	}
	/* The directories' times and subdirectory counts, one update each: a directory
	 * moved within its parent changes no count there, one replaced takes one away. */
	if (rc) {
		if (replaced_dir)
			tfs_ops_dir_changed(to, -1);
	} else if (same_dir(from, to)) {
		tfs_ops_dir_changed(to, -replaced_dir);
	} else {
		tfs_ops_dir_changed(from, -(src.kind == 'd'));
		tfs_ops_dir_changed(to, (src.kind == 'd') - replaced_dir);
	}
unplace:
	/* Unless the name moved all the same (its old name's removal failed after). */
	if (rc && placed && strcmp(src.t->name, to) && src.t->meta.dir != old_dir &&
	    tfs_tensor_set_dir(src.t, old_dir, 0))
		tfs_log(LOG_WARNING, "%s: rename failed, and its memory stays with the blocks of "
			"%s", from, to);
	return rc;
}

void tfs_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		   const char *newname, unsigned int flags)
{
	char *from = NULL, *to = NULL, *ukey = NULL;
	int rc;

	if (flags & RENAME_EXCHANGE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* rename(x, x): nothing to do (POSIX). The kernel sends it when the name was
	 * replaced between its two lookups; answering here is what keeps that from
	 * locking anything. */
	if (parent == newparent && strcmp(name, newname) == 0) {
		fuse_reply_err(req, 0);
		return;
	}
	if ((rc = tfs_node_child_path(parent, name, &from)) ||
	    (rc = tfs_node_child_path(newparent, newname, &to)))
		goto out;
	tfs_ns_lock();
	rc = rename_paths(from, to, flags, fuse_req_ctx(req)->pid, &ukey);
	/* The tensor replaced keeps the kernel's reference while its node lives: an open
	 * that looked the name up before the rename opens it (node.h). Without a node, or
	 * when the rename failed after all, nothing will open it through the kernel. */
	if (rc == 0) {
		if (ukey && !tfs_node_detach_pinned(newparent, newname, ukey))
			tfs_tensor_unpin_key(ukey);
		tfs_node_move(parent, name, newparent, newname);
		tfs_tensor_unpin_forgotten();
	} else if (ukey) {
		tfs_tensor_unpin_key(ukey);
	}
	tfs_ns_unlock();
out:
	free(from);
	free(to);
	free(ukey);
	fuse_reply_err(req, -rc);
}

/* An open directory: its listing, built at offset 0 and served in pieces.
 *
 * fh is an id, not a pointer: a READDIR whose caller was killed is abandoned by the
 * kernel, which then sends RELEASEDIR while the READDIR may still be served. The id is
 * looked up in a table, and whoever drops the last use frees the listing. */
struct dirh {
	uint64_t id;
	int users;                   /* READDIRs being served */
	int released;
	/* A READDIR from offset 0 refills buf while the reply of the one before may still be
	 * leaving (the kernel has it; writev's caller has not returned): one at a time. */
	pthread_mutex_t mu;
	char *buf;
	size_t len;
	struct dirh *next;
};

#define DIR_BUCKETS 256

static struct {
	pthread_mutex_t mu;
	struct dirh *b[DIR_BUCKETS];
	uint64_t next_id;
} dirs = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void dirh_free(struct dirh *h)
{
	struct dirh **pp = &dirs.b[h->id % DIR_BUCKETS];

	while (*pp != h)
		pp = &(*pp)->next;
	*pp = h->next;
	pthread_mutex_destroy(&h->mu);
	free(h->buf);
	free(h);
}

/* The open directory fh with one more use, or NULL when it was released. */
static struct dirh *dirh_get(uint64_t fh)
{
	struct dirh *h;

	pthread_mutex_lock(&dirs.mu);
	for (h = dirs.b[fh % DIR_BUCKETS]; h && h->id != fh; h = h->next)
		;
	if (h && h->released)
		h = NULL;
	if (h)
		h->users++;
	pthread_mutex_unlock(&dirs.mu);
	return h;
}

/* Drops a use (release: the descriptor's), freeing h with the last. */
static void dirh_put(struct dirh *h, int release)
{
	pthread_mutex_lock(&dirs.mu);
	if (release)
		h->released = 1;
	else
		h->users--;
	if (h->released && !h->users)
		dirh_free(h);
	pthread_mutex_unlock(&dirs.mu);
}

void tfs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dirh *h = calloc(1, sizeof(*h));

	(void)ino;
	if (!h) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_init(&h->mu, NULL);
	pthread_mutex_lock(&dirs.mu);
	h->id = ++dirs.next_id;
	h->next = dirs.b[h->id % DIR_BUCKETS];
	dirs.b[h->id % DIR_BUCKETS] = h;
	pthread_mutex_unlock(&dirs.mu);
	fi->fh = h->id;
	if (fuse_reply_open(req, fi) == -ENOENT)
		dirh_put(h, 1);
}

void tfs_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dirh *h = dirh_get(fi->fh);

	(void)ino;
	if (h) {
		dirh_put(h, 1);
		dirh_put(h, 0);
	}
	fuse_reply_err(req, 0);
}

static int dir_add(fuse_req_t req, struct dirh *h, size_t *cap, const char *name, mode_t mode,
		   uint64_t ino)
{
	struct stat st = { .st_ino = ino, .st_mode = mode };
	size_t need = fuse_add_direntry(req, NULL, 0, name, NULL, 0);

	if (h->len + need > *cap) {
		size_t ncap = (*cap ? *cap * 2 : 4096) + need;
		char *nb = realloc(h->buf, ncap);
		if (!nb)
			return -ENOMEM;
		h->buf = nb;
		*cap = ncap;
	}
	fuse_add_direntry(req, h->buf + h->len, need, name, &st, (off_t)(h->len + need));
	h->len += need;
	return 0;
}

/* Whether a name read from Redis can be a directory entry: anyone with Redis access may
 * have written garbage, which must not make the whole listing fail. */
static int entry_name_ok(const char *s, size_t len)
{
	return len > 0 && len <= 255 && !memchr(s, '/', len) && !memchr(s, '\0', len) &&
	       strcmp(s, ".") && strcmp(s, "..");
}

static int dir_fill(fuse_req_t req, fuse_ino_t ino, struct dirh *h)
{
	struct tfs_where w;
	redisReply *r = NULL;
	size_t cap = 0;
	int rc, skipped = 0;

	h->len = 0;
	if ((rc = tfs_node_where(ino, &w)))
		return rc;
	if (!w.path) {
		rc = -ENOENT;
		goto out;
	}
	rc = tfs_store_dir_entries(w.path, &r);
	if (rc)
		goto out;
	if ((rc = dir_add(req, h, &cap, ".", S_IFDIR, ino)) ||
	    (rc = dir_add(req, h, &cap, "..", S_IFDIR, TFS_ROOT_ID)))
		goto out;
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		const redisReply *k = r->element[i], *v = r->element[i + 1];
		char *child;

		if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING ||
		    !entry_name_ok(k->str, k->len)) {
			skipped++;
			continue;
		}
		child = tfs_path_join(w.path, k->str);
		if (!child) {
			rc = -ENOMEM;
			goto out;
		}
		rc = dir_add(req, h, &cap, k->str, v->str[0] == 'd' ? S_IFDIR : S_IFREG,
			     tfs_node_id_of(child));
		free(child);
		if (rc)
			goto out;
	}
	if (skipped)
		tfs_log(LOG_WARNING, "%s: %d garbled directory entries in Redis not listed",
			w.path[0] ? w.path : "/", skipped);
out:
	freeReplyObject(r);
	tfs_where_free(&w);
	return rc;
}

void tfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct dirh *h = dirh_get(fi->fh);
	int rc = 0;

	if (!h) {
		fuse_reply_err(req, EBADF);
		return;
	}
	pthread_mutex_lock(&h->mu);
	if (off == 0 || !h->buf)
		rc = dir_fill(req, ino, h);
	if (rc)
		fuse_reply_err(req, rc == -ESTALE ? ENOENT : -rc);
	else if (off >= 0 && (size_t)off < h->len)
		fuse_reply_buf(req, h->buf + off, h->len - (size_t)off < size ?
			       h->len - (size_t)off : size);
	else
		fuse_reply_buf(req, NULL, 0);
	pthread_mutex_unlock(&h->mu);
	dirh_put(h, 0);
}

/* The device statfs of ino reports: a tensor's, or the default of a directory that has
 * one; -1 (every device served) for the rest and when ino no longer resolves. */
static int statfs_device(fuse_ino_t ino)
{
	struct tfs_target x;
	struct tfs_where w;
	int dev = -1;

	if (ino == FUSE_ROOT_ID || tfs_node_where(ino, &w))
		return -1;
	tfs_ns_lock();
	if (tfs_ops_resolve(&w, &x) == 0) {
		if (x.kind == 'l')
			dev = x.t->meta.device;
		else if (x.kind == 'd' && x.d.has_device)
			dev = x.d.device;
	}
	tfs_ns_unlock();
	tfs_where_free(&w);
	return dev;
}

void tfs_op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct tfs_backend_stats st;
	struct statvfs sv;

	tfs_devices_stats(statfs_device(ino), &st);
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = 4096;
	sv.f_frsize = 4096;
	sv.f_blocks = st.total / 4096;
	sv.f_bfree = sv.f_bavail = st.total > st.reserved ? (st.total - st.reserved) / 4096 : 0;
	tfs_ns_lock();
	sv.f_files = 1u << 30;
	sv.f_ffree = sv.f_favail = sv.f_files - tfs_tensors.table.count;
	tfs_ns_unlock();
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}
