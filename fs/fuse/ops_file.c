/* The FUSE operations on tensors as files: create, open, read, write, release, attributes.
 * The tensor's lifetime and memory are tensor.c's; this is the file's face of it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "transport/loop.h"
#include "fuse/ops.h"
#include "fuse/reply_open.h"
#include "util/stats.h"
#include "store/claims.h"
#include "store/dircache.h"
#include "store/writer.h"
#include "store/schema.h"
#include "util/clock.h"
#include "mem/backend.h"
#include "net/net.h"
#include "tensors/tensors.h"

static struct tfs_file *file_of(const struct fuse_file_info *fi)
{
	return fi ? (struct tfs_file *)(uintptr_t)fi->fh : NULL;
}

/* The attributes of node ino, or through its open file. ESTALE when the node names
 * nothing any more. Caller holds ns. */
static int stat_node(fuse_ino_t ino, struct fuse_file_info *fi, struct stat *st)
{
	struct tfs_file *f = file_of(fi);
	struct tfs_target x;
	struct tfs_where w;
	int rc;

	if (f && f->t) {
		tfs_ops_stat_tensor(f->t, ino, st);
		return 0;
	}
	if ((rc = tfs_node_where(ino, &w)))
		return rc;
	rc = tfs_ops_resolve(&w, &x);
	if (w.path && !*w.path) {
		if (rc == 0)
			tfs_ops_root_seen(&x.d, 1);
		if (rc == -EIO) {
			/* Redis is away: the root still stats (from its last record), so the
			 * mount stays a mount for mountpoint(1), df and shells sitting in it. */
			x.kind = 'd';
			tfs_ops_root_seen(&x.d, 0);
			rc = 0;
		}
	}
	tfs_where_free(&w);
	/* The kernel asks about a node it looked up, maybe a while ago (kernel_cache.c): if the
	 * name has gone since, ESTALE makes the VFS look it up again (so an O_CREAT open,
	 * whose permission check asks here first, creates it instead of failing); stale.h
	 * says what the retry gets. */
	if (rc == -ENOENT)
		return -ESTALE;
	if (rc == 0)
		tfs_ops_stat(&x, ino, st);
	return rc;
}

/* A directory's attributes from the directory cache alone, without ns: 0, or -EAGAIN when
 * the cache cannot say (the node is not a directory that its parent's cached entries list
 * and whose cached record has the node's inode number, or is the root), and the caller
 * asks under ns. The kernel asks for a directory's attributes again after every entry
 * made or removed in it (its times changed), for the next permission check of a path
 * through it; under ns that request waited for every other metadata operation. The record read is one the directory had with the node's
 * inode number at some moment of the request (local changes update the cache under ns,
 * other nodes' are reported to it), as under ns. */
static int stat_dir_cached(fuse_ino_t ino, struct stat *st)
{
	struct tfs_target x = { .kind = 'd' };
	char parent[TFS_PATH_MAX];
	struct tfs_where w;
	const char *base;
	int rc = -EAGAIN, cacheable;

	if (tfs_node_where(ino, &w))
		return -EAGAIN;
	if (!w.path || !*w.path)
		goto out;
	/* As under ns: the parent's entries say it is a directory, and its record is that
	 * of the node's directory. */
	tfs_split(w.path, parent, sizeof(parent), &base);
	if (tfs_dircache_get_type(parent, base, &cacheable) == 'd' &&
	    tfs_dircache_get_dir(w.path, &x.d) && x.d.ino && x.d.ino == w.id) {
		tfs_ops_stat(&x, ino, st);
		rc = 0;
	}
out:
	tfs_where_free(&w);
	return rc;
}

void tfs_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int rc;

	if (!fi && stat_dir_cached(ino, &st) == 0) {
		fuse_reply_attr(req, &st, TFS_ATTR_TIMEOUT);
		return;
	}
	tfs_ns_lock();
	rc = stat_node(ino, fi, &st);
	tfs_ns_unlock();
	rc = tfs_ops_answer(req, rc, 1);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_attr(req, &st, TFS_ATTR_TIMEOUT);
}

static void set_time(struct timespec *dst, int now, const struct timespec *src)
{
	if (now)
		clock_gettime(CLOCK_REALTIME, dst);
	else
		*dst = *src;
}

/* setattr on a local tensor. Caller holds ns. */
static int setattr_tensor(struct tfsd_tensor *t, const struct stat *a, int to_set, pid_t pid)
{
	struct tfs_meta *m = &t->meta;
	int rc;

	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (a->st_size < 0)
			return -EINVAL;
		if ((rc = tfs_tensor_resize(t, (uint64_t)a->st_size, pid)))
			return rc;
	}
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = to_set & FUSE_SET_ATTR_UID ? a->st_uid : m->uid;
		gid_t gid = to_set & FUSE_SET_ATTR_GID ? a->st_gid : m->gid;
		mode_t mode = to_set & FUSE_SET_ATTR_MODE ? a->st_mode & 07777 : m->mode;

		rc = tfs_tensor_set_owner(t, uid, gid, mode);
		if (rc) {
			tfs_log(LOG_ERR, "%s: owner change refused by the backend: %s", t->name,
				strerror(-rc));
			return rc;
		}
		clock_gettime(CLOCK_REALTIME, &t->ctime);
	}
	if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW))
		set_time(&t->atime, to_set & FUSE_SET_ATTR_ATIME_NOW, &a->st_atim);
	tfs_tensor_fold_times(t);    /* an earlier write's time must not override this one */
	if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW))
		set_time(&t->mtime, to_set & FUSE_SET_ATTR_MTIME_NOW, &a->st_mtim);
	if (to_set & FUSE_SET_ATTR_CTIME)
		t->ctime = a->st_ctim;
	return tfs_tensor_save(t);
}

/* setattr on a directory record. Caller holds ns. */
static int setattr_dir(const char *path, struct tfs_dirrec *d, const struct stat *a, int to_set)
{
	if (to_set & FUSE_SET_ATTR_SIZE)
		return -EISDIR;
	if (to_set & FUSE_SET_ATTR_MODE)
		d->mode = a->st_mode & 07777;
	if (to_set & FUSE_SET_ATTR_UID)
		d->uid = a->st_uid;
	if (to_set & FUSE_SET_ATTR_GID)
		d->gid = a->st_gid;
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
		d->ctime = tfs_now();
	if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)) {
		struct timespec mt;

		set_time(&mt, to_set & FUSE_SET_ATTR_MTIME_NOW, &a->st_mtim);
		d->mtime = mt.tv_sec;
	}
	/* Kept apart from mtime (pjdfstest utimensat/00): 0 means never set. */
	if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW)) {
		struct timespec at;

		set_time(&at, to_set & FUSE_SET_ATTR_ATIME_NOW, &a->st_atim);
		d->atime = at.tv_sec ? at.tv_sec : 1;
	}
	return tfs_store_dir_write(path, d);
}

void tfs_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		    struct fuse_file_info *fi)
{
	struct tfs_file *f = file_of(fi);
	struct tfs_target x = { 0 };
	struct tfs_where w = { 0 };
	struct stat st;
	int rc = 0;

	tfs_ns_lock();
	if (f && f->t) {
		x.kind = 'l';
		x.t = f->t;
	} else if (f) {
		rc = -EREMOTE;
	} else if ((rc = tfs_node_where(ino, &w)) == 0) {
		rc = tfs_ops_resolve(&w, &x);
		if (rc == -ENOENT)
			rc = -ESTALE;
	}
	if (rc == 0) {
		if (x.kind == 'l')
			rc = setattr_tensor(x.t, attr, to_set, fuse_req_ctx(req)->pid);
		else if (x.kind == 'd')
			rc = setattr_dir(w.path, &x.d, attr, to_set);
		else
			rc = x.kind == 'r' ? -EREMOTE : -EIO;
	}
	/* x holds what was just written: the reply needs no second lookup. */
	if (rc == 0)
		tfs_ops_stat(&x, ino, &st);
	tfs_ns_unlock();
	tfs_where_free(&w);
	rc = tfs_ops_answer(req, rc, 0);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_attr(req, &st, TFS_ATTR_TIMEOUT);
}

/* Makes the tensor name in parent (open for f when f is not NULL): 0, with the entry to
 * reply in *e. */
static int new_file(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		    struct tfs_file *f, struct fuse_entry_param *e)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct stat st;
	struct tfs_dirrec d;
	struct tfsd_tensor *t;
	struct tfs_store_claim *claim;
	struct tfs_where pw;
	uint32_t gid, fmode;
	char *path;
	int rc, device;

	if ((rc = tfs_node_child_path(parent, name, &path)))
		return rc;
	if ((rc = tfs_node_where(parent, &pw)) == 0 && !pw.path)
		rc = -ENOENT;
	if (rc) {
		tfs_where_free(&pw);
		free(path);
		return rc;
	}
	tfs_log(LOG_DEBUG, "CREATE /%s", path);
	tfs_ns_lock();
	rc = tfs_store_dir(pw.path, &d);
	if (rc)
		goto out;
	device = d.has_device ? d.device : tfs_mem.device;
	rc = tfs_tensor_claim(path, device, ctx->uid, &d, &claim);
	if (rc)
		goto out;
	/* The claim's answer comes behind whatever the write-behind queue holds: wait for it
	 * without the namespace lock, so that other operations go on meanwhile. Nothing here
	 * can take the name in between: the kernel holds the parent directory's lock across
	 * this create (and so across any rmdir of it or xattr change on it), and the queue or
	 * another node trying the name get HSETNX's answer "taken". */
	tfs_ns_unlock();
	rc = tfs_store_link_wait(path, 't', claim);
	tfs_ns_lock();
	if (rc)
		goto out;
	gid = ctx->gid;
	fmode = mode & 07777 & ~ctx->umask;
	tfs_store_dir_inherit(&d, 0, &gid, &fmode);
	rc = tfs_tensor_create_linked(path, d.has_dtype ? d.dtype : TFS_U8, device, ctx->uid,
				      gid, fmode, &d, f, &t);
	if (rc == 0) {
		tfs_ops_stat_tensor(t, 0, &st);
		tfs_ops_dir_changed(path, 0);
		rc = tfs_ops_entry(parent, name, &st, e);
		if (rc && f) {
			tfs_tensor_put_open(f);
			f->t = NULL;
		}
	}
	if (rc == 0 && f) {
		f->created = path;
		path = NULL;
	}
out:
	tfs_ns_unlock();
	tfs_where_free(&pw);
	free(path);
	/* Its claim may have gone with this thread sending the queue itself (writer.c), the
	 * writer's thread asleep: the record goes beside the reply, not after it. */
	if (rc == 0)
		tfs_writer_wake_now();
	return rc;
}

void tfs_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	struct fuse_entry_param e;
	int rc;

	(void)rdev;
	if (!S_ISREG(mode)) {
		fuse_reply_err(req, EPERM);   /* only tensors: no fifos, sockets or devices */
		return;
	}
	rc = new_file(req, parent, name, mode, NULL, &e);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		tfs_ops_reply_entry(req, &e);
}

static void put_file(struct tfs_file *f)
{
	if (f->t) {
		tfs_ns_lock();
		tfs_tensor_put_open(f);
		tfs_ns_unlock();
	}
	free(f->rname);
	free(f->created);
	free(f);
}

/* Another node's tensor's bytes (net/net.h), for the request's process: its ids travel
 * with the request and its owning node checks them. */
static void remote_io(fuse_req_t req, struct tfs_file *f, int wr, const char *wbuf,
		      size_t size, off_t off)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct tfs_net_cred cr = { .uid = ctx->uid, .gid = ctx->gid };
	void *buf;
	ssize_t n;
	int ng;

	if (!f->rname) {
		fuse_reply_err(req, EREMOTE);
		return;
	}
	buf = wr ? (void *)wbuf : (size ? malloc(size) : NULL);
	if (!buf && size) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ng = fuse_req_getgroups(req, TFS_NET_GIDS, cr.gids);
	cr.ngids = ng > 0 ? (uint32_t)(ng < TFS_NET_GIDS ? ng : TFS_NET_GIDS) : 0;
	n = off < 0 ? -EINVAL : tfs_net_io(f->rnode, f->rname, f->rino, wr, buf, size,
					    (uint64_t)off, &cr);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (wr)
		fuse_reply_write(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	if (!wr)
		free(buf);
}

void tfs_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		   struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	struct tfs_file *f = calloc(1, sizeof(*f));
	int rc;

	if (!f) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	f->pid = fuse_req_ctx(req)->pid;
	f->writable = (fi->flags & O_ACCMODE) != O_RDONLY;
	rc = new_file(req, parent, name, mode, f, &e);
	if (rc) {
		free(f);
		fuse_reply_err(req, -rc);
		return;
	}
	fi->fh = (uintptr_t)f;
	fi->direct_io = !tfs_fuse.page_cache;
	if (tfs_reply_create(req, &e, fi) == -ENOENT) {
		/* Interrupted: the kernel has neither the node nor the file. */
		tfs_node_forget(e.ino, 1);
		put_file(f);
	}
}

void tfs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tfs_file *f = calloc(1, sizeof(*f));
	struct tfs_target x;
	struct tfs_where w;
	int rc;

	if (!f) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	f->pid = fuse_req_ctx(req)->pid;
	f->writable = (fi->flags & O_ACCMODE) != O_RDONLY;
	/* Under ns, which every change of the node table takes: the node is where its
	 * object is. */
	tfs_ns_lock();
	if ((rc = tfs_node_where(ino, &w))) {
		tfs_ns_unlock();
		goto out;
	}
	rc = tfs_ops_resolve(&w, &x);
	/* The kernel opens a node it looked up, maybe a while ago (kernel_cache.c): a name gone
	 * since then is stale, and ESTALE makes the VFS look it up again (an O_CREAT open
	 * then creates it) instead of failing the open; stale.h says what the retry gets. */
	if (rc == -ENOENT)
		rc = -ESTALE;
	if (rc == 0 && x.kind == 'd')
		rc = -EISDIR;
	if (rc == 0 && x.kind == 'g')
		rc = -EIO;
	if (rc == 0 && x.kind == 'l') {
		rc = tfs_tensor_get_open(x.t, f);
		/* O_TRUNC comes with the open (FUSE_CAP_ATOMIC_O_TRUNC), not as a separate
		 * truncate: `echo ab > f` must not leave f's old tail (pjdfstest open/00). As
		 * Linux does, also with O_RDONLY: the kernel checked write permission. */
		if (rc == 0 && (fi->flags & O_TRUNC)) {
			rc = tfs_tensor_resize(x.t, 0, f->pid);
			if (rc)
				tfs_tensor_put_open(f);
		}
	}
	/* Another node's tensor opens (its xattrs are readable); its bytes are not here but
	 * may be asked of its node. */
	if (rc == 0 && x.kind == 'r' && w.path && tfs_net_on()) {
		f->rname = strdup(w.path);
		snprintf(f->rnode, sizeof(f->rnode), "%s", x.m.node);
		f->rino = x.m.ino;
		if (!f->rname)
			rc = -ENOMEM;
	}
	tfs_ns_unlock();
	tfs_where_free(&w);
out:
	rc = tfs_ops_answer(req, rc, 0);
	if (rc) {
		free(f);
		fuse_reply_err(req, -rc);
		return;
	}
	fi->fh = (uintptr_t)f;
	/* No page cache: another process may change the memory through its handle, and a
	 * read must return what the device holds now. --page-cache (for measurement) caches
	 * within one open only: keep_cache stays 0, so each open drops it. */
	fi->direct_io = !tfs_fuse.page_cache;
	if (tfs_reply_open(req, fi) == -ENOENT)
		put_file(f);
}

void tfs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	put_file(file_of(fi));
	fuse_reply_err(req, 0);
}

/* How many newer marks a read waits for before it reads what the memory holds: a
 * producer marking faster than its kernels end must not keep a reader waiting forever. */
#define MARK_WAITS 4

/* A producer marked the tensor written (tfs_mark_written): its kernel may still be
 * running, and cat must not see half of its output. Takes t->io shared and returns with
 * it held. The wait itself holds no lock of the tensor: resizes, owner moves and new marks
 * take io exclusive under ns, and a slow producer must not stall every metadata
 * operation. After the wait the mark is looked at again: a newer one is waited for too. */
static void lock_after_mark(struct tfsd_tensor *t)
{
	uint8_t mark[TFS_IPC_HANDLE_SIZE], done[TFS_IPC_HANDLE_SIZE];
	int rc, device, waited = 0;

	for (int i = 0;; i++) {
		pthread_rwlock_rdlock(&t->io);
		if (!t->has_mark || !tfs_mem.ops->wait_mark || !t->alloc || i == MARK_WAITS ||
		    (waited && memcmp(t->mark, done, sizeof(done)) == 0))
			return;
		memcpy(mark, t->mark, sizeof(mark));
		device = t->meta.device;
		pthread_rwlock_unlock(&t->io);
		rc = tfs_mem.ops->wait_mark(tfs_mem.be, device, mark);
		/* Its process gone: its work ended with it. Anything else: the read goes on
		 * with what the memory holds, as it did before marks existed, and says so. */
		if (rc && rc != -ESTALE)
			tfs_log(LOG_WARNING, "%s: cannot wait for its written mark: %s", t->name,
				strerror(-rc));
		memcpy(done, mark, sizeof(done));
		waited = 1;
	}
}

/* The reply writes from memory the backend holds the bytes in (read_mem: the host
 * backend's mapping, the cuda backend's pinned read area), so the kernel copies them once,
 * into the reader's buffer, and the daemon not at all; where it cannot, from a file that
 * the reply splices (read_fd), or from a copy. The io lock is held until the reply is
 * written, so the memory cannot move under it. */
void tfs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi)
{
	struct tfs_file *f = file_of(fi);
	struct tfsd_tensor *t = f->t;
	struct fuse_bufvec bv;
	const void *at;
	void *mem = NULL;
	off_t pos;
	int rc = 0, fd;

	(void)ino;
	if (!t) {
		tfs_stats_io(TFS_ST_READS, size);
		remote_io(req, f, 0, NULL, size, off);
		return;
	}
	lock_after_mark(t);
	if (off < 0 || (uint64_t)off >= t->meta.bytes)
		size = 0;
	else if (size > t->meta.bytes - (uint64_t)off)
		size = (size_t)(t->meta.bytes - (uint64_t)off);
	bv = FUSE_BUFVEC_INIT(size);
	tfs_stats_io(TFS_ST_READS, size);
	TFS_PROF_START(t0);
	if (size && tfs_mem.ops->read_mem &&
	    tfs_mem.ops->read_mem(tfs_mem.be, t->alloc, (uint64_t)off, size, &at) == 0) {
		bv.buf[0].mem = (void *)at;
	} else if (size && tfs_fuse.splice_reads &&
		   tfs_mem.ops->read_fd(tfs_mem.be, t->alloc, (uint64_t)off, size, &fd, &pos) == 0) {
		bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
		bv.buf[0].fd = fd;
		bv.buf[0].pos = pos;
	} else if (size) {
		mem = malloc(size);
		rc = mem ? tfs_mem.ops->copy_out(tfs_mem.be, t->alloc, (uint64_t)off, mem, size) :
		     -ENOMEM;
		bv.buf[0].mem = mem;
	}
	TFS_PROF_COPY(0, t0);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
	pthread_rwlock_unlock(&t->io);
	free(mem);
}

/* A write by someone without CAP_FSETID clears set-user-ID, and set-group-ID where group
 * execute is set, as the kernel does for filesystems it writes itself (pjdfstest
 * chmod/12). With direct I/O the kernel leaves it to the filesystem. Caller holds ns. */
static int kill_suid(struct tfsd_tensor *t)
{
	mode_t mode = t->meta.mode;

	if (!(mode & S_ISUID) && !((mode & S_ISGID) && (mode & S_IXGRP)))
		return 0;
	mode &= ~S_ISUID;
	if (mode & S_IXGRP)
		mode &= ~S_ISGID;
	t->meta.mode = mode;
	clock_gettime(CLOCK_REALTIME, &t->ctime);
	return 1;
}

int tfs_ops_write_suid(fuse_req_t req, struct tfsd_tensor *t)
{
	int killed = 0;

	if ((t->meta.mode & (S_ISUID | S_ISGID)) && fuse_req_ctx(req)->uid != 0) {
		tfs_ns_lock();
		killed = kill_suid(t);
		if (killed)
			tfs_tensor_save(t);
		tfs_ns_unlock();
	}
	return killed;
}

void tfs_ops_written(fuse_ino_t ino, struct tfsd_tensor *t, int killed)
{
	struct timespec now;

	/* Not under ns (writes never wait for metadata): one atomic store, which the next
	 * reader of the times folds in (tfs_tensor_fold_times). */
	clock_gettime(CLOCK_REALTIME, &now);
	__atomic_store_n(&t->wtime_ns, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&t->dirty, 1, __ATOMIC_RELAXED);
	if (killed)
		tfs_kcache_forget_attr(ino);
}

void tfs_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		  struct fuse_file_info *fi)
{
	struct tfs_file *f = file_of(fi);
	struct tfsd_tensor *t = f->t;
	uint64_t end = (uint64_t)off + size;
	int rc, killed;

	tfs_stats_io(TFS_ST_WRITES, size);
	if (!t) {
		remote_io(req, f, 1, buf, size, off);
		return;
	}
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (size == 0) {
		fuse_reply_write(req, 0);
		return;
	}
	killed = tfs_ops_write_suid(req, t);
	for (;;) {
		struct tfs_grow g = { 0 };
		int none;

		pthread_rwlock_rdlock(&t->io);
		if (end <= t->meta.bytes)
			break;
		none = !t->alloc;      /* read under io, which every change of it takes */
		pthread_rwlock_unlock(&t->io);
		if (none)
			tfs_tensor_grow_prepare(f, end, &g);
		/* Extending the file: the size is metadata, changed under ns. */
		tfs_ns_lock();
		rc = end > t->meta.bytes ?
		     tfs_tensor_resize_pre(t, end, fuse_req_ctx(req)->pid, &g) : 0;
		tfs_ns_unlock();
		tfs_tensor_grow_discard(&g);
		if (rc) {
			fuse_reply_err(req, -rc);
			return;
		}
	}
	TFS_PROF_START(t0);
	tfs_stats_write_begin();
	rc = tfs_mem.ops->copy_in(tfs_mem.be, t->alloc, (uint64_t)off, buf, size);
	tfs_stats_write_end();
	TFS_PROF_COPY(1, t0);
	pthread_rwlock_unlock(&t->io);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	tfs_ops_written(ino, t, killed);
	fuse_reply_write(req, size);
}

/* fsync and fsyncdir: the bytes are in device memory once write() returns; what they
 * add is the Redis records, which are written behind (writer.c): wait until they are in. */
void tfs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino; (void)datasync; (void)fi;
	fuse_reply_err(req, -tfs_writer_sync());
}

/* fallocate(mode 0), which posix_fallocate and `fallocate -l` use: the tensor grows to
 * cover the range, as a truncate would (its memory is allocated whole). Keeping the size
 * or punching holes means nothing for device memory. */
void tfs_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
		      struct fuse_file_info *fi)
{
	struct tfs_file *f = file_of(fi);
	uint64_t end;
	int rc = 0;

	(void)ino;
	if (mode) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (offset < 0 || length <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (!f->t) {
		fuse_reply_err(req, EREMOTE);
		return;
	}
	end = (uint64_t)offset + (uint64_t)length;
	tfs_ns_lock();
	if (end > f->t->meta.bytes)
		rc = tfs_tensor_resize(f->t, end, fuse_req_ctx(req)->pid);
	tfs_ns_unlock();
	fuse_reply_err(req, -rc);
}
