/* FUSE ioctl: a tensor filled from a file the caller has open (fill_ioctl.h), so a load
 * through the mount reads the file once, into memory the device copies from, instead of
 * carrying every byte through a FUSE write request and the daemon's staging copy.
 *
 * The daemon may run as root with every capability: it never opens the caller's file
 * again, which would check the daemon's rights and give the file the daemon's
 * credentials. It takes the caller's own open file (pidfd_getfd) and reads only from one
 * opened for reading, so it reads what the caller could read from its descriptor, and
 * nothing more. It reads only files of local file systems (mountinfo.h), found without a
 * call that reaches the file system: a FUSE server, this daemon included, or a network
 * server could leave the reading thread waiting for good. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fill_ioctl.h"
#include "fuse/ops_mkbatch.h"
#include "mkbatch.h"
#include "pull_ioctl.h"
#include "fuse/ops.h"
#include "util/proc.h"
#include "util/stats.h"
#include "mem/backend.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL         /* linux/pidfd.h, Linux 6.9 */
#endif
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif

/* The most fills served at once: each holds a request thread (and, on cuda, a staging slot)
 * while it reads, so the rest stay free for everything else. */
static int fills_running;

static int fills_max(void)
{
	return tfs_fuse.threads > 2 ? tfs_fuse.threads / 2 : 1;
}

/* The caller's open file of descriptor fd, shared with it (pidfd_getfd: the daemon must be
 * allowed to ptrace the caller, as root, or as the same user where Yama allows). The
 * caller is the thread of the request, which waits in it. A fd or -errno. */
static int callers_file(fuse_req_t req, int fd)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	int pidfd, f, rc;

	if (c->pid <= 0)           /* not in the daemon's pid namespace */
		return -EACCES;
	pidfd = (int)syscall(SYS_pidfd_open, c->pid, PIDFD_THREAD);
	/* before Linux 6.9 pidfd_open takes only a thread group's leader */
	if (pidfd < 0 && errno == EINVAL) {
		pid_t g = tfs_proc_tgid(c->pid);

		pidfd = g > 0 ? (int)syscall(SYS_pidfd_open, g, 0) : -1;
	}
	if (pidfd < 0)
		return errno == ENOSYS ? -ENOTTY : -EACCES;
	f = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	rc = f >= 0 ? f : errno == EBADF ? -EBADF : errno == ENOSYS ? -ENOTTY : -EACCES;
	close(pidfd);
	return rc;
}

/* 0 when src is a regular file of a local file system, open for reading, with the device
 * and inode the request names; *size its size. Asks nothing of the file system: statx
 * from what the kernel has (AT_STATX_DONT_SYNC), the type from mountinfo (read again only
 * after the mount table changed, proc.h). */
static int check_source(int src, const struct tfs_fill_req *q, uint64_t *size)
{
	struct statx sx;
	int fl;

	fl = fcntl(src, F_GETFL);
	if (fl < 0 || (fl & O_PATH) || (fl & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	if (statx(src, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_INO | STATX_SIZE | STATX_MNT_ID, &sx))
		return -errno;
	if ((uint64_t)makedev(sx.stx_dev_major, sx.stx_dev_minor) != q->dev || sx.stx_ino != q->ino)
		return -ESTALE;
	if (!S_ISREG(sx.stx_mode))
		return -EINVAL;
	if (!(sx.stx_mask & STATX_MNT_ID))
		return -EXDEV;
	/* a mount of another namespace is not listed: refused as unknown */
	if (tfs_proc_mount_local(sx.stx_mnt_id) != 1)
		return -EXDEV;
	*size = sx.stx_size;
	return 0;
}

static int fill(fuse_req_t req, fuse_ino_t ino, struct tfs_file *f, const struct tfs_fill_req *q)
{
	struct tfsd_tensor *t = f->t;
	uint64_t size = 0;
	int src, rc, killed = 0, ran = 0;

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
	src = callers_file(req, q->fd);
	if (src < 0) {
		rc = src;
		goto out_count;
	}
	if ((rc = check_source(src, q, &size)))
		goto out_src;
	/* Refused before a byte moves; a file cut shorter during the read still ends it
	 * with ENODATA, part written. */
	if (size < q->src_off + q->len) {
		rc = -ENODATA;
		goto out_src;
	}
	if (!tfs_mem.ops->copy_in_fd) {
		rc = -ENOTTY;
		goto out_src;
	}
	pthread_rwlock_rdlock(&t->io);
	rc = q->dst_off + q->len > t->meta.bytes ? -EINVAL : 0;
	pthread_rwlock_unlock(&t->io);
	if (rc)
		goto out_src;
	killed = tfs_ops_write_suid(req, t);
	pthread_rwlock_rdlock(&t->io);
	/* the size may have changed while unlocked */
	if (q->dst_off + q->len > t->meta.bytes) {
		rc = -EINVAL;
	} else {
		tfs_stats_write_begin();
		rc = tfs_mem.ops->copy_in_fd(tfs_mem.be, t->alloc, q->dst_off, src, q->src_off,
					      (size_t)q->len);
		tfs_stats_write_end();
		ran = 1;
	}
	pthread_rwlock_unlock(&t->io);
	if (rc == 0)
		tfs_stats_io(TFS_ST_FILLS, q->len);
	/* a failed copy may have written part of the range */
	if (ran || killed)
		tfs_ops_written(ino, t, killed);
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
	if (cmd == TFS_IOC_PULL) {
		tfs_op_pull(req, ino, fi, flags, in_buf, in_bufsz);
		return;
	}
	if (cmd == TFS_IOC_MKBATCH) {
		/* only on tensors' files, only from 64-bit callers, as the fill */
		rc = (flags & (FUSE_IOCTL_COMPAT | FUSE_IOCTL_DIR)) || !fi
			     ? -ENOTTY : tfs_op_mkbatch(req, ino, (struct tfs_file *)(uintptr_t)fi->fh,
							in_buf, in_bufsz, out_bufsz);
		if (rc)
			fuse_reply_err(req, -rc);
		return;
	}
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
