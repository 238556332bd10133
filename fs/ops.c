/* The FUSE operations (high-level API: tensors are named by path in Redis, so paths are
 * what the daemon works with). Metadata operations run under tfs_d.ns; read and write
 * copy bytes under the tensor's io lock only. */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <linux/fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"

#define KEYMAX 4400

static const char *nm(const char *path)
{
	return path[0] == '/' ? path + 1 : path;
}

static struct timespec ts(int64_t s)
{
	struct timespec t = { (time_t)s, 0 };
	return t;
}

static void stat_tensor(struct stat *st, const struct tfs_tensor *t)
{
	memset(st, 0, sizeof(*st));
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
	memset(st, 0, sizeof(*st));
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
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFDIR | (d->mode & 07777);
	st->st_nlink = 2;
	st->st_uid = d->uid;
	st->st_gid = d->gid;
	st->st_size = 4096;
	st->st_blksize = 1 << 20;
	st->st_atim = st->st_mtim = ts(d->mtime);
	st->st_ctim = ts(d->ctime);
}

/* What a path names. kind: 'l' local tensor (*t), 'r' another node's tensor (*m),
 * 'd' directory (*d), 'g' a garbled record. Returns 0 or -ENOENT/-EIO. Caller holds ns. */
struct target {
	int kind;
	struct tfs_tensor *t;
	struct tfs_meta m;
	struct tfs_dirrec d;
};

static int resolve(const char *name, struct target *x)
{
	int type, rc;

	x->t = tfs_table_find(name);
	if (x->t) {
		x->kind = 'l';
		return 0;
	}
	type = tfs_rec_type(name);
	if (type < 0)
		return type;
	if (type == 'd') {
		x->kind = 'd';
		return tfs_rec_dir(name, &x->d);
	}
	rc = tfs_rec_tensor(name, &x->m);
	if (rc == -EBADMSG) {
		/* Logged by tfs_rec_tensor. The name shows (mode 0, size 0) so rm can remove
		 * it; nothing else is served from it. */
		x->kind = 'g';
		return 0;
	}
	if (rc)
		return rc;
	if (strcmp(x->m.node, tfs_d.o.node) == 0) {
		/* Ours by its record, but not in memory: a leftover the start-up sweep missed. */
		tfs_log(LOG_WARNING, "%s: stale record of this node, not served", name);
		return -ENOENT;
	}
	x->kind = 'r';
	return 0;
}

/* The root's last record, guarded by ns. */
static struct tfs_dirrec root_seen = { .mode = 0755 };

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct tfs_file *f = fi ? (struct tfs_file *)(uintptr_t)fi->fh : NULL;
	struct target x;
	int rc = 0;

	tfs_ns_lock();
	if (f && f->t) {
		stat_tensor(st, f->t);
		goto out;
	}
	if (!path) {
		rc = -ENOENT;
		goto out;
	}
	rc = resolve(nm(path), &x);
	if (!rc && x.kind == 'd' && !*nm(path))
		root_seen = x.d;
	if (rc == -EIO && !*nm(path)) {
		/* Redis is away: the root still stats (from its last record), so the mount
		 * stays a mount for mountpoint(1), df and shells sitting in it. */
		x.kind = 'd';
		x.d = root_seen;
		rc = 0;
	}
	/* A GETATTR names a node the kernel looked up, maybe a while ago (kcache.c): if the
	 * name has gone since, ESTALE makes the VFS look it up again (so an O_CREAT open,
	 * whose permission check asks here first, creates it instead of failing). A LOOKUP
	 * must say ENOENT. */
	if (rc == -ENOENT && tfs_req_opcode == FUSE_GETATTR)
		rc = -ESTALE;
	if (rc)
		goto out;
	if (x.kind == 'l') {
		stat_tensor(st, x.t);
	} else if (x.kind == 'r') {
		stat_meta(st, &x.m);
	} else if (x.kind == 'g') {
		memset(st, 0, sizeof(*st));
		st->st_mode = S_IFREG;
		st->st_nlink = 1;
	} else {
		stat_dir(st, &x.d);
	}
out:
	tfs_ns_unlock();
	return rc;
}

/* readdir gets no path (nullpath_ok): opendir keeps the directory's name in fh. */
static int op_opendir(const char *path, struct fuse_file_info *fi)
{
	char *name = strdup(nm(path));

	if (!name)
		return -ENOMEM;
	fi->fh = (uintptr_t)name;
	return 0;
}

static int op_releasedir(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	free((char *)(uintptr_t)fi->fh);
	return 0;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	char key[KEYMAX];
	redisReply *r;
	int rc;

	(void)off; (void)flags;
	path = (const char *)(uintptr_t)fi->fh;
	rc = tfs_rec_type(path);
	if (rc < 0)
		return rc;
	if (rc != 'd')
		return -ENOTDIR;
	if ((rc = tfs_key(key, sizeof(key), "dirents", path)))
		return rc;
	r = tfs_rl_cmdf(&rc, "HGETALL %s", key);
	if (!r)
		return -EIO;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		struct stat st = { 0 };
		if (r->element[i]->type != REDIS_REPLY_STRING)
			continue;
		st.st_mode = r->element[i + 1]->str[0] == 'd' ? S_IFDIR : S_IFREG;
		if (fill(buf, r->element[i]->str, &st, 0, 0))
			break;
	}
	freeReplyObject(r);
	return 0;
}

static int op_mkdir(const char *path, mode_t mode)
{
	struct fuse_context *ctx = fuse_get_context();
	struct tfs_dirrec d = { 0 };
	int rc;

	tfs_ns_lock();
	rc = tfs_rec_link(nm(path), 'd');
	if (rc == 0) {
		d.mode = mode & 07777;
		d.uid = ctx->uid;
		d.gid = ctx->gid;
		d.ctime = d.mtime = tfs_now();
		rc = tfs_rec_dir_write(nm(path), &d);
		if (rc)
			tfs_rec_unlink(nm(path));
	}
	tfs_ns_unlock();
	return rc;
}

static int dir_entries(const char *name, long long *n)
{
	char key[KEYMAX];
	redisReply *r;
	int rc;

	if ((rc = tfs_key(key, sizeof(key), "dirents", name)))
		return rc;
	r = tfs_rl_cmdf(&rc, "HLEN %s", key);
	if (!r)
		return -EIO;
	*n = r->integer;
	freeReplyObject(r);
	return 0;
}

static int del_keys(const char *kind1, const char *kind2, const char *name)
{
	char k1[KEYMAX], k2[KEYMAX];
	redisReply *r;
	int rc;

	if (tfs_key(k1, sizeof(k1), kind1, name) || tfs_key(k2, sizeof(k2), kind2, name))
		return -ENAMETOOLONG;
	r = tfs_rl_cmdf(&rc, "DEL %s %s", k1, k2);
	freeReplyObject(r);
	tfs_dc_forget(name);
	return r ? 0 : -EIO;
}

static int op_rmdir(const char *path)
{
	const char *name = nm(path);
	long long n;
	int rc;

	if (name[0] == '\0')
		return -EBUSY;
	tfs_ns_lock();
	rc = tfs_rec_type(name);
	if (rc >= 0 && rc != 'd')
		rc = -ENOTDIR;
	if (rc >= 0)
		rc = dir_entries(name, &n);
	if (rc == 0 && n > 0)
		rc = -ENOTEMPTY;
	if (rc == 0)
		rc = del_keys("dir", "dirents", name);
	if (rc == 0)
		rc = tfs_rec_unlink(name);
	tfs_ns_unlock();
	return rc;
}

static int op_unlink(const char *path)
{
	const char *name = nm(path);
	struct tfs_meta m;
	int rc;

	tfs_ns_lock();
	struct tfs_tensor *t = tfs_table_find(name);
	if (t && t->hidden) {
		/* libfuse removing its hidden name at the last close: the name's reference
		 * went when the user unlinked; the open file's goes in release. */
		free(t->hidden);
		t->hidden = NULL;
		rc = 0;
		goto out;
	}
	if (t) {
		rc = tfs_tensor_unlink(t);
		goto out;
	}
	rc = tfs_rec_type(name);
	if (rc < 0)
		goto out;
	if (rc == 'd') {
		rc = -EISDIR;
		goto out;
	}
	rc = tfs_rec_tensor(name, &m);
	if (rc == 0 && strcmp(m.node, tfs_d.o.node)) {
		rc = -EREMOTE;
		goto out;
	}
	if (rc == -EIO)
		goto out;
	/* A record garbled by hand, a stale one of this node, or a dangling entry: removing
	 * the name is what rm asked for, and there is no memory behind it. */
	tfs_log(LOG_NOTICE, "%s: removing a record with no tensor behind it", name);
	rc = del_keys("tensor", "tensor", name);
	if (rc == 0)
		rc = tfs_rec_unlink(name);
out:
	tfs_ns_unlock();
	return rc;
}

static int refuse_link(const char *a, const char *b)
{
	(void)a; (void)b;
	return -EPERM;            /* a tensor has one name; links would alias refcounts */
}

static int new_file(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_context *ctx = fuse_get_context();
	const char *name = nm(path), *base;
	char parent[4096];
	struct tfs_dirrec d;
	struct tfs_tensor *t;
	struct tfs_file *f = NULL;
	struct tfs_wb_call *claim;
	int rc, device;

	if (fi) {
		f = calloc(1, sizeof(*f));
		if (!f)
			return -ENOMEM;
		f->pid = ctx->pid;
	}
	tfs_split(name, parent, sizeof(parent), &base);
	tfs_ns_lock();
	rc = tfs_rec_dir(parent, &d);
	if (rc)
		goto out;
	device = d.has_device ? d.device : tfs_d.o.device;
	rc = tfs_tensor_claim(name, device, &d, &claim);
	if (rc)
		goto out;
	/* The claim's answer comes behind whatever the write-behind queue holds: wait for it
	 * without the namespace lock, so that other operations go on meanwhile. Nothing here
	 * can take the name in between: the kernel holds the parent directory's lock across
	 * this create (and so across any rmdir of it or xattr change on it), and the queue or
	 * another node trying the name get HSETNX's answer "taken". */
	tfs_ns_unlock();
	rc = tfs_rec_link_wait(name, 't', claim);
	tfs_ns_lock();
	if (rc)
		goto out;
	rc = tfs_tensor_create_linked(name, d.has_dtype ? d.dtype : TFS_U8, device, ctx->uid,
				      ctx->gid, mode, f, &t);
out:
	tfs_ns_unlock();
	if (rc) {
		free(f);
		return rc;
	}
	if (fi) {
		fi->fh = (uintptr_t)f;
		fi->direct_io = !tfs_d.o.page_cache;
	}
	return 0;
}

static int op_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	return new_file(path, mode, fi);
}

static int op_mknod(const char *path, mode_t mode, dev_t rdev)
{
	(void)rdev;
	if (!S_ISREG(mode))
		return -EPERM;        /* only tensors live here: no fifos, sockets or devices */
	return new_file(path, mode, NULL);
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
	struct tfs_file *f = calloc(1, sizeof(*f));
	struct target x;
	int rc;

	if (!f)
		return -ENOMEM;
	f->pid = fuse_get_context()->pid;
	tfs_ns_lock();
	rc = resolve(nm(path), &x);
	/* The kernel opens a node it looked up, maybe a while ago (kcache.c): a name gone
	 * since then is stale, and ESTALE makes the VFS look it up again (an O_CREAT open
	 * then creates it) instead of failing the open. */
	if (rc == -ENOENT)
		rc = -ESTALE;
	if (rc == 0 && x.kind == 'd')
		rc = -EISDIR;
	if (rc == 0 && x.kind == 'g')
		rc = -EIO;
	if (rc == 0 && x.kind == 'l')
		rc = tfs_tensor_get_open(x.t, f);
	/* Another node's tensor opens (its xattrs are readable) but its bytes are not here. */
	tfs_ns_unlock();
	if (rc) {
		free(f);
		return rc;
	}
	fi->fh = (uintptr_t)f;
	/* No page cache: another process may change the memory through its handle, and a
	 * read must return what the device holds now (SPEC §10). --page-cache (for
	 * measurement) caches within one open only: keep_cache stays 0, so each open drops it. */
	fi->direct_io = !tfs_d.o.page_cache;
	return 0;
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
	struct tfs_file *f = (struct tfs_file *)(uintptr_t)fi->fh;

	(void)path;
	if (f->t) {
		tfs_ns_lock();
		tfs_tensor_put_open(f);
		tfs_ns_unlock();
	}
	free(f);
	return 0;
}

/* A producer marked the tensor written (tfs_mark_written): its kernel may still be
 * running, and cat must not see half of its output (SPEC §10). Caller holds t->io. */
static void wait_mark(struct tfs_tensor *t)
{
	int rc = tfs_d.be_ops->wait_mark(tfs_d.be, t->alloc, t->mark);

	/* Its process gone: its work ended with it. Anything else: the read goes on with
	 * what the memory holds, as it did before marks existed, and says so. */
	if (rc && rc != -ESTALE)
		tfs_log(LOG_WARNING, "%s: cannot wait for its written mark: %s", t->name,
			strerror(-rc));
}

/* read_buf rather than read: libfuse's read() path hands a malloc'd buffer, which the
 * bytes would cross on their way to the kernel. The cuda backend instead leaves them in a
 * file of its own (read_fd), which the reply splices from: the kernel then copies them
 * once, into the reader's buffer. The host backend fills a malloc'd buffer as libfuse
 * would. */
static int op_read_buf(const char *path, struct fuse_bufvec **bufp, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct tfs_file *f = (struct tfs_file *)(uintptr_t)fi->fh;
	struct tfs_tensor *t = f->t;
	struct fuse_bufvec *bv;
	void *mem = NULL;
	off_t pos;
	int rc = 0, fd;

	(void)path;
	if (!t)
		return -EREMOTE;
	bv = malloc(sizeof(*bv));
	if (!bv)
		return -ENOMEM;
	pthread_rwlock_rdlock(&t->io);
	if (t->has_mark && tfs_d.be_ops->wait_mark && t->alloc)
		wait_mark(t);
	if ((uint64_t)off >= t->meta.bytes)
		size = 0;
	else if (size > t->meta.bytes - (uint64_t)off)
		size = (size_t)(t->meta.bytes - (uint64_t)off);
	*bv = FUSE_BUFVEC_INIT(size);
	if (size && tfs_d.splice_reads &&
	    tfs_d.be_ops->read_fd(tfs_d.be, t->alloc, (uint64_t)off, size, &fd, &pos) == 0) {
		bv->buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
		bv->buf[0].fd = fd;
		bv->buf[0].pos = pos;
	} else if (size) {
		mem = malloc(size);
		rc = mem ? tfs_d.be_ops->copy_out(tfs_d.be, t->alloc, (uint64_t)off, mem, size) :
		     -ENOMEM;
		bv->buf[0].mem = mem;
	}
	pthread_rwlock_unlock(&t->io);
	if (rc) {
		free(mem);
		free(bv);
		return rc;
	}
	*bufp = bv;
	return 0;
}

static int op_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct tfs_file *f = (struct tfs_file *)(uintptr_t)fi->fh;
	struct tfs_tensor *t = f->t;
	uint64_t end = (uint64_t)off + size;
	int rc;

	(void)path;
	if (!t)
		return -EREMOTE;
	if (size == 0)
		return 0;
	for (;;) {
		pthread_rwlock_rdlock(&t->io);
		if (end <= t->meta.bytes)
			break;
		pthread_rwlock_unlock(&t->io);
		/* Extending the file: the size is metadata, changed under ns. */
		tfs_ns_lock();
		rc = end > t->meta.bytes ? tfs_tensor_resize(t, end) : 0;
		tfs_ns_unlock();
		if (rc)
			return rc;
	}
	rc = tfs_d.be_ops->copy_in(tfs_d.be, t->alloc, (uint64_t)off, buf, size);
	pthread_rwlock_unlock(&t->io);
	if (rc)
		return rc;
	clock_gettime(CLOCK_REALTIME, &t->mtime);
	t->ctime = t->mtime;
	__atomic_store_n(&t->dirty, 1, __ATOMIC_RELAXED);
	return (int)size;
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct tfs_file *f = fi ? (struct tfs_file *)(uintptr_t)fi->fh : NULL;
	struct target x = { 0 };
	int rc = 0;

	if (size < 0)
		return -EINVAL;
	tfs_ns_lock();
	if (f && f->t) {
		x.kind = 'l';
		x.t = f->t;
	} else if (!path) {
		rc = -EREMOTE;
	} else {
		rc = resolve(nm(path), &x);
	}
	if (rc == 0)
		rc = x.kind == 'l' ? tfs_tensor_resize(x.t, (uint64_t)size) :
		     x.kind == 'd' ? -EISDIR : x.kind == 'g' ? -EIO : -EREMOTE;
	tfs_ns_unlock();
	return rc;
}

/* chmod, chown and utimens: change a local tensor or a directory record. */
enum attr_op { A_MODE, A_OWNER, A_TIMES };

static void set_time(struct timespec *dst, const struct timespec *src)
{
	if (src->tv_nsec == UTIME_OMIT)
		return;
	if (src->tv_nsec == UTIME_NOW)
		clock_gettime(CLOCK_REALTIME, dst);
	else
		*dst = *src;
}

static int change_attr(const char *path, struct fuse_file_info *fi, enum attr_op op,
		       mode_t mode, uid_t uid, gid_t gid, const struct timespec tv[2])
{
	struct tfs_file *f = fi ? (struct tfs_file *)(uintptr_t)fi->fh : NULL;
	struct target x = { 0 };
	int rc = 0;

	tfs_ns_lock();
	if (f && f->t) {
		x.kind = 'l';
		x.t = f->t;
	} else if (!path) {
		rc = -EREMOTE;
	} else {
		rc = resolve(nm(path), &x);
	}
	if (rc)
		goto out;
	if (x.kind == 'r' || x.kind == 'g') {
		rc = x.kind == 'r' ? -EREMOTE : -EIO;
	} else if (x.kind == 'l') {
		struct tfs_meta *m = &x.t->meta;
		uid_t nuid = m->uid;
		gid_t ngid = m->gid;
		mode_t nmode = m->mode;
		if (op == A_MODE)
			nmode = mode & 07777;
		if (op == A_OWNER) {
			if (uid != (uid_t)-1)
				nuid = uid;
			if (gid != (gid_t)-1)
				ngid = gid;
		}
		if (op == A_TIMES) {
			set_time(&x.t->atime, &tv[0]);
			set_time(&x.t->mtime, &tv[1]);
		} else {
			rc = tfs_tensor_set_owner(x.t, nuid, ngid, nmode);
			if (rc) {
				tfs_log(LOG_ERR, "%s: owner change refused by the backend: %s",
					x.t->name, strerror(-rc));
				goto out;
			}
			clock_gettime(CLOCK_REALTIME, &x.t->ctime);
		}
		rc = tfs_tensor_save(x.t);
	} else {
		struct tfs_dirrec *d = &x.d;
		if (op == A_MODE)
			d->mode = mode & 07777;
		if (op == A_OWNER) {
			if (uid != (uid_t)-1)
				d->uid = uid;
			if (gid != (gid_t)-1)
				d->gid = gid;
		}
		if (op == A_TIMES) {
			struct timespec mt = ts(d->mtime);
			set_time(&mt, &tv[1]);
			d->mtime = mt.tv_sec;
		} else {
			d->ctime = tfs_now();
		}
		rc = tfs_rec_dir_write(nm(path), d);
	}
out:
	tfs_ns_unlock();
	return rc;
}

static int op_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	return change_attr(path, fi, A_MODE, mode, 0, 0, NULL);
}

static int op_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	return change_attr(path, fi, A_OWNER, 0, uid, gid, NULL);
}

static int op_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	return change_attr(path, fi, A_TIMES, 0, 0, 0, tv);
}

static int rename_key(const char *kind, const char *from, const char *to)
{
	char k1[KEYMAX], k2[KEYMAX];
	redisReply *r;
	int rc;

	if (tfs_key(k1, sizeof(k1), kind, from) || tfs_key(k2, sizeof(k2), kind, to))
		return -ENAMETOOLONG;
	r = tfs_rl_cmdf(&rc, "EXISTS %s", k1);
	if (!r)
		return -EIO;
	rc = r->integer ? 1 : 0;
	freeReplyObject(r);
	if (!rc)
		return 0;
	r = tfs_rl_cmdf(&rc, "RENAME %s %s", k1, k2);
	freeReplyObject(r);
	if (strcmp(kind, "tensor")) {
		tfs_dc_forget(from);
		tfs_dc_forget(to);
	}
	return r ? 0 : -EIO;
}

/* Walks a directory's subtree. check=1: fails with -EREMOTE when another node's tensor is
 * inside (its owner keys its memory by name). check=0: moves every key to the new path. */
static int move_tree(const char *from, const char *to, int check)
{
	char key[KEYMAX], a[4096], b[4096];
	redisReply *r;
	int rc = 0;

	if ((rc = tfs_key(key, sizeof(key), "dirents", from)))
		return rc;
	r = tfs_rl_cmdf(&rc, "HGETALL %s", key);
	if (!r)
		return -EIO;
	for (size_t i = 0; rc == 0 && i + 1 < r->elements; i += 2) {
		const char *e = r->element[i]->str;
		if (snprintf(a, sizeof(a), "%s/%s", from, e) >= (int)sizeof(a) ||
		    snprintf(b, sizeof(b), "%s/%s", to, e) >= (int)sizeof(b)) {
			rc = -ENAMETOOLONG;
			break;
		}
		if (r->element[i + 1]->str[0] == 'd') {
			rc = move_tree(a, b, check);
		} else if (check) {
			if (!tfs_table_find(a))
				rc = -EREMOTE;
		} else {
			struct tfs_tensor *t = tfs_table_find(a);
			rc = t ? tfs_tensor_rename(t, b) : rename_key("tensor", a, b);
		}
	}
	freeReplyObject(r);
	if (rc == 0 && !check) {
		rc = rename_key("dir", from, to);
		if (rc == 0)
			rc = rename_key("dirents", from, to);
	}
	return rc;
}

/* An unlink of an open file reaches us as libfuse's rename to .fuse_hiddenNNN (that keeps
 * fstat working on the open file, which the high-level API cannot do once a node has no
 * path). It is an unlink for tensorfs: the name and its reference go at once (SPEC §6);
 * the hidden name is only an alias libfuse uses until the last close. */
static int hide(const char *from, const char *to)
{
	struct tfs_tensor *t;
	char *alias = strdup(to);
	int rc, keep;

	if (!alias)
		return -ENOMEM;
	tfs_ns_lock();
	t = tfs_table_find(from);
	/* Still referenced after the name goes? (else unlink frees t) */
	keep = t && tfs_tensor_refcount(t) > 1;
	rc = t ? tfs_tensor_unlink(t) : -EREMOTE;
	if (rc == 0 && keep) {
		t->hidden = alias;
		alias = NULL;
	}
	tfs_ns_unlock();
	free(alias);
	return rc;
}

static int op_rename(const char *from_path, const char *to_path, unsigned int flags)
{
	const char *from = nm(from_path), *to = nm(to_path);
	struct target src, dst;
	long long n;
	int rc, dst_rc;
	size_t fl = strlen(from);

	if (flags & RENAME_EXCHANGE)
		return -EINVAL;
	if (strcmp(from, to) == 0)
		return 0;
	if (tfs_is_hidden(to))
		return hide(from, to);
	tfs_ns_lock();
	rc = resolve(from, &src);
	if (rc)
		goto out;
	if (src.kind == 'r' || src.kind == 'g') {
		rc = src.kind == 'r' ? -EREMOTE : -EIO;
		goto out;
	}
	if (src.kind == 'd' && strncmp(to, from, fl) == 0 && to[fl] == '/') {
		rc = -EINVAL;         /* into its own subtree */
		goto out;
	}
	dst_rc = resolve(to, &dst);
	if (dst_rc && dst_rc != -ENOENT) {
		rc = dst_rc;
		goto out;
	}
	if (dst_rc == 0) {
		if (flags & RENAME_NOREPLACE) {
			rc = -EEXIST;
			goto out;
		}
		if (src.kind == 'd' && dst.kind != 'd') {
			rc = -ENOTDIR;
			goto out;
		}
		if (src.kind != 'd' && dst.kind == 'd') {
			rc = -EISDIR;
			goto out;
		}
		if (dst.kind == 'r' || dst.kind == 'g') {
			rc = dst.kind == 'r' ? -EREMOTE : -EIO;
			goto out;
		}
		if (dst.kind == 'd') {
			rc = dir_entries(to, &n);
			if (rc == 0 && n > 0)
				rc = -ENOTEMPTY;
			if (rc == 0)
				rc = del_keys("dir", "dirents", to);
			if (rc == 0)
				rc = tfs_rec_unlink(to);
		} else {
			rc = tfs_tensor_unlink(dst.t);
		}
		if (rc)
			goto out;
	}
	if (src.kind == 'd' && (rc = move_tree(from, to, 1)))
		goto out;
	rc = tfs_rec_link(to, src.kind == 'd' ? 'd' : 't');
	if (rc)
		goto out;
	rc = src.kind == 'd' ? move_tree(from, to, 0) : tfs_tensor_rename(src.t, to);
	if (rc) {
		tfs_rec_unlink(to);
		goto out;
	}
	rc = tfs_rec_unlink(from);
out:
	tfs_ns_unlock();
	return rc;
}

/* fsync and fsyncdir: the bytes are in device memory once write() returns; what they
 * add is the Redis records, which are written behind (wb.c): wait until they are in. */
static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path; (void)datasync; (void)fi;
	return tfs_wb_sync();
}

static int op_statfs(const char *path, struct statvfs *sv)
{
	struct tfs_backend_stats st;

	(void)path;
	tfs_d.be_ops->stats(tfs_d.be, &st);
	memset(sv, 0, sizeof(*sv));
	sv->f_bsize = 4096;
	sv->f_frsize = 4096;
	sv->f_blocks = st.total / 4096;
	sv->f_bfree = sv->f_bavail = st.total > st.reserved ? (st.total - st.reserved) / 4096 : 0;
	tfs_ns_lock();
	sv->f_files = 1u << 30;
	sv->f_ffree = sv->f_favail = sv->f_files - tfs_d.table.count;
	tfs_ns_unlock();
	sv->f_namemax = 255;
	return 0;
}

static int op_getxattr(const char *path, const char *name, char *value, size_t size)
{
	return tfs_xattr_get(path ? nm(path) : "", name, value, size);
}

static int op_setxattr(const char *path, const char *name, const char *value, size_t size,
		       int flags)
{
	int rc = tfs_xattr_set(nm(path), name, value, size, flags);

	/* A reshape changes the size, which the kernel keeps (it only marks ctime stale
	 * after a setxattr): its next stat must ask, not answer from what it has. The
	 * user's own attributes and the written mark (user.tensorfs.event) change neither. */
	if (rc == 0 && strncmp(name, "user.tensor.", 12) == 0)
		tfs_kc_forget(nm(path));
	return rc;
}

static int op_listxattr(const char *path, char *list, size_t size)
{
	return tfs_xattr_list(nm(path), list, size);
}

static int op_removexattr(const char *path, const char *name)
{
	return tfs_xattr_remove(nm(path), name);
}

/* Whether a pipe may hold a whole read reply. libfuse splices a reply only into a pipe
 * that holds all of it (the data, the header and a page per piece); otherwise it copies
 * an fd buffer out through a fresh allocation per read, slower than not splicing. Past
 * fs.pipe-max-size (1 MiB by default) that takes CAP_SYS_RESOURCE. */
static int pipe_holds_reply(void)
{
	int p[2], ok;

	if (pipe2(p, O_CLOEXEC))
		return 0;
	ok = fcntl(p[0], F_SETPIPE_SZ, (1 << 20) + (16 << 10)) >= 0;
	close(p[0]);
	close(p[1]);
	return ok;
}

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->hard_remove = 0;     /* see hide() */
	cfg->nullpath_ok = 1;
	/* Names can change behind the kernel's back (the queue, other nodes): the kernel
	 * keeps looked-up names only while the daemon can tell it of such changes
	 * (kcache.c), and never keeps a miss, so a name made elsewhere shows at once.
	 * Attributes are kept a second: otherwise the kernel asks for them again before
	 * nearly every operation (default_permissions), 3 of the 6 requests of an open +
	 * getxattr and 5 of the 15 of a create -> shape -> unlink. Changes made elsewhere
	 * drop them (kcache.c); what the daemon does not hear of (Redis away) shows within
	 * the second. */
	tfs_kc_init(fuse_get_context()->fuse, cfg);
	cfg->attr_timeout = 1;
	cfg->negative_timeout = 0;
	cfg->direct_io = !tfs_d.o.page_cache;
	cfg->kernel_cache = 0;
	/* Requests are read into the workers' own buffers (loop.c), never through a pipe. */
	conn->want &= ~FUSE_CAP_SPLICE_READ;
	/* Replies to reads splice from the backend's file (op_read_buf) where they can. */
	if (tfs_d.be_ops->read_fd) {
		tfs_d.splice_reads = (conn->capable & FUSE_CAP_SPLICE_WRITE) && pipe_holds_reply();
		if (tfs_d.splice_reads)
			conn->want |= FUSE_CAP_SPLICE_WRITE;
		tfs_log(tfs_d.splice_reads ? LOG_INFO : LOG_NOTICE, "%s",
			tfs_d.splice_reads ? "reads: replies splice from pinned memory" :
			"reads: a pipe cannot hold a 1 MiB reply (raise fs.pipe-max-size to 2 MiB, "
			"or give the daemon CAP_SYS_RESOURCE): reads copy once more");
	}
	conn->max_write = 1 << 20;
	conn->max_read = 1 << 20;     /* must match the max_read mount option */
	conn->max_readahead = 1 << 20;
	return NULL;
}

const struct fuse_operations tfs_ops = {
	.init = op_init,
	.getattr = op_getattr,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.releasedir = op_releasedir,
	.mkdir = op_mkdir,
	.rmdir = op_rmdir,
	.unlink = op_unlink,
	.symlink = refuse_link,
	.link = refuse_link,
	.mknod = op_mknod,
	.create = op_create,
	.open = op_open,
	.release = op_release,
	.read_buf = op_read_buf,
	.write = op_write,
	.truncate = op_truncate,
	.chmod = op_chmod,
	.chown = op_chown,
	.utimens = op_utimens,
	.rename = op_rename,
	.statfs = op_statfs,
	.fsync = op_fsync,
	.fsyncdir = op_fsync,
	.getxattr = op_getxattr,
	.setxattr = op_setxattr,
	.listxattr = op_listxattr,
	.removexattr = op_removexattr,
};
