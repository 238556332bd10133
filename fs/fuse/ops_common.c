/* What the FUSE operations share: resolving a node to what it names, and attributes. */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "fuse/ops.h"
#include "fuse/stale.h"
#include "store/schema.h"
#include "store/records.h"

static struct timespec ts(int64_t s)
{
	struct timespec t = { (time_t)s, 0 };
	return t;
}

int tfs_ops_resolve_path(const char *name, struct tfs_target *x)
{
	int type, rc;

	x->t = tfs_table_find(name);
	if (x->t) {
		x->kind = 'l';
		return 0;
	}
	type = tfs_store_type(name);
	if (type < 0)
		return type;
	if (type == 'd') {
		x->kind = 'd';
		return tfs_store_dir(name, &x->d);
	}
	rc = tfs_store_tensor(name, &x->m);
	if (rc == -EBADMSG) {
		/* Logged by tfs_store_tensor. The name shows (mode 0, size 0) so rm can remove
		 * it; nothing else is served from it. */
		x->kind = 'g';
		return 0;
	}
	if (rc)
		return rc;
	if (strcmp(x->m.node, tfs_schema.node) == 0) {
		/* Ours by its record, but not in memory: a leftover the start-up sweep missed. */
		tfs_log(LOG_WARNING, "%s: stale record of this node, not served", name);
		return -ENOENT;
	}
	x->kind = 'r';
	return 0;
}

int tfs_ops_resolve(const struct tfs_where *w, struct tfs_target *x)
{
	int rc;

	if (w->path) {
		rc = tfs_ops_resolve_path(w->path, x);
		if (rc == 0 && x->kind != 'g' && !tfs_where_is(w, x->kind == 'l' ? x->t->meta.ino :
							   x->kind == 'r' ? x->m.ino : x->d.ino))
			rc = -ENOENT;
		return rc;
	}
	x->t = tfs_table_find_key(w->ukey);
	x->kind = 'l';
	return x->t ? 0 : -ENOENT;
}

void tfs_ops_stat_tensor(struct tfsd_tensor *t, uint64_t id, struct stat *st)
{
	tfs_tensor_fold_times(t);
	memset(st, 0, sizeof(*st));
	st->st_ino = id ? id : t->meta.ino;
	st->st_mode = S_IFREG | (t->meta.mode & 07777);
	st->st_nlink = t->linked;
	st->st_uid = t->meta.uid;
	st->st_gid = t->meta.gid;
	st->st_size = (off_t)t->meta.bytes;
	st->st_blocks = (blkcnt_t)((t->meta.bytes + 511) / 512);
	/* cp and dd size their buffers from st_blksize: 1 MiB matches max_write. */
	st->st_blksize = 1 << 20;
	st->st_atim = t->atime;
	st->st_mtim = t->mtime;
	st->st_ctim = t->ctime;
}

static void stat_meta(struct stat *st, const struct tfs_meta *m)
{
	st->st_mode = S_IFREG | (m->mode & 07777);
	st->st_nlink = 1;
	st->st_uid = m->uid;
	st->st_gid = m->gid;
	st->st_size = (off_t)m->bytes;
	st->st_blocks = (blkcnt_t)((m->bytes + 511) / 512);
	st->st_blksize = 1 << 20;
	st->st_atim = st->st_mtim = ts(m->mtime);
	st->st_ctim = ts(m->ctime);
	if (m->ctime_ns > 0) {
		st->st_ctim.tv_sec = m->ctime_ns / 1000000000;
		st->st_ctim.tv_nsec = m->ctime_ns % 1000000000;
	}
}

static void stat_dir(struct stat *st, const struct tfs_dirrec *d)
{
	st->st_mode = S_IFDIR | (d->mode & 07777);
	st->st_nlink = 2 + (nlink_t)d->nsub;
	st->st_uid = d->uid;
	st->st_gid = d->gid;
	st->st_size = 4096;
	st->st_blksize = 1 << 20;
	st->st_atim = st->st_mtim = ts(d->mtime);
	if (d->atime)
		st->st_atim = ts(d->atime);
	st->st_ctim = ts(d->ctime);
}

void tfs_ops_stat(const struct tfs_target *x, uint64_t id, struct stat *st)
{
	if (x->kind == 'l') {
		tfs_ops_stat_tensor(x->t, id, st);
		return;
	}
	memset(st, 0, sizeof(*st));
	st->st_ino = id ? id : x->kind == 'r' ? x->m.ino : x->kind == 'd' ? x->d.ino : 0;
	if (x->kind == 'r') {
		stat_meta(st, &x->m);
	} else if (x->kind == 'g') {
		st->st_mode = S_IFREG;
		st->st_nlink = 1;
	} else {
		stat_dir(st, &x->d);
	}
}

int tfs_ops_entry(uint64_t parent, const char *name, const struct stat *st,
		  struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = tfs_node_lookup(parent, name, st->st_ino);
	if (!e->ino)
		return -ENOMEM;
	e->attr = *st;
	e->attr.st_ino = e->ino;
	e->attr_timeout = TFS_ATTR_TIMEOUT;
	e->entry_timeout = tfs_kcache_entry_timeout();
	return 0;
}

void tfs_ops_reply_entry(fuse_req_t req, const struct fuse_entry_param *e)
{
	/* The request was interrupted: the kernel never got the id, so owes no FORGET. */
	if (fuse_reply_entry(req, e) == -ENOENT)
		tfs_node_forget(e->ino, 1);
}

int tfs_ops_answer(fuse_req_t req, int rc, int walk)
{
	pid_t tid = fuse_req_ctx(req)->pid;

	if (rc == -ESTALE)
		return tfs_stale_answer(tid);
	if (rc == 0 && !walk)
		tfs_stale_done(tid);
	return rc;
}

void tfs_ops_dir_changed(const char *path, int nsub)
{
	char parent[TFS_PATH_MAX];
	const char *base;
	struct tfs_dirrec d;

	tfs_split(path, parent, sizeof(parent), &base);
	/* Best effort: the change itself was made; its directory's times are logged. */
	if (tfs_store_dir(parent, &d) || tfs_store_dir_changed(parent, &d, nsub))
		tfs_log(LOG_INFO, "%s: cannot update its directory's times", path);
}

/* The root's last record, guarded by ns; the default one until a record was read. */
static struct tfs_dirrec root_seen;
static int root_seen_set;

void tfs_ops_root_seen(struct tfs_dirrec *d, int set)
{
	if (!set && !root_seen_set)
		tfs_store_dir_default(&root_seen);
	if (set)
		root_seen = *d;
	else
		*d = root_seen;
	root_seen_set = 1;
}
