/* FUSE ioctl: a tensor filled from a file the caller has open (fill_ioctl.h), so a load
 * through the mount reads the file once, into memory the device copies from, instead of
 * carrying every byte through a FUSE write request and the daemon's staging copy.
 *
 * The daemon may run as root: it opens the caller's file as the caller, through
 * /proc/<pid>/fd/<fd> (the file the caller holds, in whatever namespace or chroot it
 * lives), with the caller's file-system user, group and supplementary groups on this
 * thread only (raw system calls: glibc's wrappers change every thread). An fd opened with
 * O_PATH or for writing alone thus gives no read access the caller did not have. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fill_ioctl.h"
#include "fileio.h"
#include "log.h"
#include "ops.h"
#include "stats.h"

/* The most fills served at once: each holds a request thread (and, on cuda, a staging slot)
 * while it reads, so the rest stay free for everything else. */
static int fills_running;

static int fills_max(void)
{
	return tfs_d.o.threads > 2 ? tfs_d.o.threads / 2 : 1;
}

/* The thread's file-system identity becomes the caller's, or back to the daemon's. Only
 * the calling thread changes. 0 or -errno. */
static int become(uid_t uid, gid_t gid, const gid_t *groups, int ngroups)
{
	if (syscall(SYS_setgroups, (size_t)ngroups, groups))
		return -errno;
	syscall(SYS_setfsgid, gid);
	syscall(SYS_setfsuid, uid);
	/* setfsuid/setfsgid report no failure: ask what they are now */
	if ((uid_t)syscall(SYS_setfsuid, (uid_t)-1) != uid ||
	    (gid_t)syscall(SYS_setfsgid, (gid_t)-1) != gid)
		return -EPERM;
	return 0;
}

/* The caller's fd, opened for reading as the caller. A fd or -errno. */
static int open_as_caller(fuse_req_t req, int fd)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	gid_t *mine = NULL, *theirs = NULL;
	int nmine, ntheirs, rc, e;
	char path[64];

	if (c->pid <= 0)           /* not in the daemon's pid namespace */
		return -EACCES;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)c->pid, fd);
	if (geteuid() != 0) {
		/* Not root: the daemon can read only as itself, so only for itself. */
		if (c->uid != geteuid())
			return -EACCES;
		rc = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		return rc >= 0 ? rc : -errno;
	}
	if (c->uid == 0 && c->gid == 0) {
		rc = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		return rc >= 0 ? rc : -errno;
	}
	nmine = getgroups(0, NULL);
	ntheirs = fuse_req_getgroups(req, 0, NULL);
	/* The caller's groups unknown: none (less than it has, never more). */
	if (ntheirs < 0)
		ntheirs = 0;
	if (nmine < 0 || !(mine = calloc((size_t)nmine + 1, sizeof(*mine))) ||
	    !(theirs = calloc((size_t)ntheirs + 1, sizeof(*theirs)))) {
		rc = -ENOMEM;
		goto out;
	}
	if ((nmine = getgroups(nmine, mine)) < 0) {
		rc = -errno;
		goto out;
	}
	if (ntheirs) {
		int n = fuse_req_getgroups(req, ntheirs, theirs);

		ntheirs = n < 0 ? 0 : n < ntheirs ? n : ntheirs;
	}
	if ((rc = become(c->uid, c->gid, theirs, ntheirs)) == 0) {
		rc = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (rc < 0)
			rc = -errno;
	}
	/* Back to the daemon's own; a thread left as someone else must not serve again. */
	e = become(geteuid(), getegid(), mine, nmine);
	if (e) {
		tfs_log(LOG_CRIT, "cannot take back the daemon's identity after a fill: %s",
			strerror(-e));
		abort();
	}
out:
	free(theirs);
	free(mine);
	return rc;
}

static int fill(fuse_req_t req, fuse_ino_t ino, struct tfs_file *f, const struct tfs_fill_req *q)
{
	struct tfsd_tensor *t = f->t;
	struct stat st;
	struct statfs sfs;
	int src, rc, killed;

	if (!t)
		return -EREMOTE;
	if (!f->writable)
		return -EBADF;
	if (q->flags || q->len > TFS_FILL_MAX || q->src_off > INT64_MAX - q->len ||
	    q->dst_off > UINT64_MAX - q->len)
		return -EINVAL;
	if (q->fd < 0)
		return -EBADF;
	if (q->len == 0)
		return 0;
	if (__atomic_add_fetch(&fills_running, 1, __ATOMIC_RELAXED) > fills_max()) {
		rc = -EBUSY;
		goto out_count;
	}
	src = open_as_caller(req, q->fd);
	if (src < 0) {
		rc = src;
		goto out_count;
	}
	if (fstat(src, &st) || fstatfs(src, &sfs)) {
		rc = -errno;
		goto out_src;
	}
	/* The file the caller named, not one that took its number since. */
	if ((uint64_t)st.st_dev != q->dev || (uint64_t)st.st_ino != q->ino) {
		rc = -ESTALE;
		goto out_src;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto out_src;
	}
	/* Refused before a byte moves; a file cut shorter during the read still ends it
	 * with ENODATA, part written. */
	if ((uint64_t)st.st_size < q->src_off + q->len) {
		rc = -ENODATA;
		goto out_src;
	}
	/* A FUSE file system may wait on its server: on this one, for the very threads that
	 * would serve it. */
	if (sfs.f_type == FUSE_SUPER_MAGIC) {
		rc = -EXDEV;
		goto out_src;
	}
	killed = tfs_ops_write_suid(req, t);
	pthread_rwlock_rdlock(&t->io);
	if (q->dst_off + q->len > t->meta.bytes) {
		rc = -EINVAL;
	} else if (tfs_d.be_ops->copy_in_fd) {
		tfs_stats_write_begin();
		rc = tfs_d.be_ops->copy_in_fd(tfs_d.be, t->alloc, q->dst_off, src, q->src_off,
					      (size_t)q->len);
		tfs_stats_write_end();
	} else {
		rc = -ENOTTY;
	}
	pthread_rwlock_unlock(&t->io);
	if (rc == 0) {
		tfs_stats_io(TFS_ST_FILLS, q->len);
		tfs_ops_written(ino, t, killed);
	}
out_src:
	close(src);
out_count:
	__atomic_sub_fetch(&fills_running, 1, __ATOMIC_RELAXED);
	return rc;
}

void tfs_op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		  struct fuse_file_info *fi, unsigned flags, const void *in_buf,
		  size_t in_bufsz, size_t out_bufsz)
{
	struct tfs_fill_req q;
	int rc;

	(void)arg;
	(void)out_bufsz;
	/* Only the fill, only on files (a directory's fh is not a struct tfs_file), only from
	 * 64-bit callers (a 32-bit one would lay the request out the same, but is untested). */
	if (cmd != TFS_IOC_FILL || (flags & (FUSE_IOCTL_DIR | FUSE_IOCTL_COMPAT)) ||
	    !fi) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (in_bufsz != sizeof(q)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(&q, in_buf, sizeof(q));
	rc = fill(req, ino, (struct tfs_file *)(uintptr_t)fi->fh, &q);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_ioctl(req, 0, NULL, 0);
}
