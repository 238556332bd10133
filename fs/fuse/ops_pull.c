/* The pull ioctl (core/pull_ioctl.h): another node's bytes straight into a tensor. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fuse/ops.h"
#include "mem/backend.h"
#include "net/net.h"
#include "pull_ioctl.h"
#include "tensors/tensors.h"
#include "util/guard.h"
#include "util/stats.h"

/* The source's node and inode number: 0, -EXDEV (this node's), -ENOENT, -ESTALE. */
static int source(const char *path, uint64_t ino, char *node, uint64_t *rino)
{
	struct tfs_target x;
	int rc;

	tfs_ns_lock();
	rc = tfs_ops_resolve_path(path, &x);
	if (rc == 0 && x.kind == 'l')
		rc = -EXDEV;
	else if (rc == 0 && x.kind != 'r')
		rc = -EINVAL;
	else if (rc == 0 && ino && x.m.ino != ino)
		rc = -ESTALE;
	if (rc == 0) {
		memcpy(node, x.m.node, TFS_NODE_MAX);
		*rino = x.m.ino;
	}
	tfs_ns_unlock();
	return rc;
}

struct sink {
	struct tfsd_tensor *t;
	uint64_t dst_off;
};

/* Each chunk straight from the request's buffer into the tensor. */
static int put_chunk(void *arg, uint64_t at, const void *data, size_t n)
{
	struct sink *k = arg;
	struct tfsd_tensor *t = k->t;
	int rc;

	pthread_rwlock_rdlock(&t->io);
	if (k->dst_off + at > t->meta.bytes || n > t->meta.bytes - k->dst_off - at)
		rc = -EINVAL;        /* it shrank meanwhile */
	else
		rc = tfs_mem.ops->copy_in(tfs_mem.be, t->alloc, k->dst_off + at, data, n);
	pthread_rwlock_unlock(&t->io);
	if (rc == 0)
		tfs_stats_add(TFS_ST_NET_STAGED_BYTES, n);
	return rc;
}

/* Straight into the tensor's memory where it is host memory: UCX receives each chunk
 * there. Its io is held shared for the whole pull (so its memory is neither moved nor
 * freed under UCX), and the mapping is lent as a guarded span (a user who may write the
 * tensor can truncate it meanwhile: EIO, not a dead daemon). -ENOTSUP: stage instead. */
static ssize_t pull_into(struct tfsd_tensor *t, const char *node, const char *path,
			 uint64_t rino, const struct tfs_pull_req *q, const struct tfs_net_cred *cr)
{
	struct tfs_guard_span span;
	ssize_t n;
	int rc;

	if (!tfs_mem.ops->host_span || !tfs_net_zero_copy())
		return -ENOTSUP;
	pthread_rwlock_rdlock(&t->io);
	if (q->dst_off > t->meta.bytes || q->len > t->meta.bytes - q->dst_off)
		rc = -EINVAL;        /* it shrank meanwhile */
	else
		rc = tfs_mem.ops->host_span(tfs_mem.be, t->alloc, q->dst_off, q->len, 1, &span);
	if (rc) {
		pthread_rwlock_unlock(&t->io);
		return rc == -EINVAL ? rc : -ENOTSUP;
	}
	n = tfs_net_read_into(node, path, rino, span.p, q->len, q->src_off, cr);
	if (tfs_mem.ops->host_span_end(tfs_mem.be, &span) && n >= 0)
		n = -EIO;
	pthread_rwlock_unlock(&t->io);
	if (n > 0)
		tfs_stats_add(TFS_ST_NET_INPLACE_BYTES, (uint64_t)n);
	return n;
}

static int pull(fuse_req_t req, fuse_ino_t ino, struct tfs_file *f,
		const struct tfs_pull_req *q)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct tfs_net_cred cr = { .uid = ctx->uid, .gid = ctx->gid };
	struct tfsd_tensor *t = f->t;
	char path[TFS_PULL_PATH + 1], node[TFS_NODE_MAX];
	struct sink k = { t, q->dst_off };
	uint64_t rino, bytes;
	ssize_t n;
	int rc, ng;

	if (!t)
		return -EREMOTE;
	if (!f->writable)
		return -EBADF;
	if (q->flags || q->pathlen == 0 || q->pathlen > TFS_PULL_PATH || q->len == 0 ||
	    q->len > TFS_PULL_MAX || memchr(q->path, '\0', q->pathlen))
		return -EINVAL;
	pthread_rwlock_rdlock(&t->io);
	bytes = t->meta.bytes;
	pthread_rwlock_unlock(&t->io);
	if (q->dst_off > bytes || q->len > bytes - q->dst_off)
		return -EINVAL;
	memcpy(path, q->path, q->pathlen);
	path[q->pathlen] = '\0';
	if ((rc = source(path, q->ino, node, &rino)))
		return rc;
	ng = fuse_req_getgroups(req, TFS_NET_GIDS, cr.gids);
	cr.ngids = ng > 0 ? (uint32_t)(ng < TFS_NET_GIDS ? ng : TFS_NET_GIDS) : 0;
	n = pull_into(t, node, path, rino, q, &cr);
	if (n == -ENOTSUP)
		n = tfs_net_read_each(node, path, rino, 0, NULL, q->len, q->src_off, &cr, put_chunk,
				      &k);
	if (n >= 0 && (uint64_t)n != q->len)
		n = -ENODATA;
	if (n >= 0)
		tfs_ops_written(ino, t, 0);
	return n < 0 ? (int)n : 0;
}

void tfs_op_pull(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, unsigned flags,
		 const void *in_buf, size_t in_bufsz)
{
	struct tfs_pull_req *q;
	int rc;

	if ((flags & (FUSE_IOCTL_DIR | FUSE_IOCTL_COMPAT)) || !fi) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (in_bufsz != sizeof(*q)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* Copied: in_buf's alignment is libfuse's. */
	if (!(q = malloc(sizeof(*q)))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memcpy(q, in_buf, sizeof(*q));
	rc = pull(req, ino, (struct tfs_file *)(uintptr_t)fi->fh, q);
	free(q);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_ioctl(req, 0, NULL, 0);
}
