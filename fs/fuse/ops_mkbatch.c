/* The batch create ioctl (core/mkbatch.h): many typed tensors of one directory in one
 * request, issued on a tensor of that directory open for writing (the kernel checked that
 * open: a read-only mount, an LSM's rules). Its names are claimed in Redis together, in one
 * round trip, as the queue claims a chunk's creates (queue.c's preclaim), and each tensor
 * is then made as a queue create makes it: shaped, with its record, awaiting its own
 * claim. ns is held throughout, so no name changes between a claim and its tensor; the
 * kernel holds no lock of the directory across an ioctl, unlike a create, and a request
 * holds at most TFS_MK_COUNT_MAX entries, so the hold is bounded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuse/ops.h"
#include "fuse/ops_mkbatch.h"
#include "log.h"
#include "mem/devices.h"
#include "mkbatch.h"
#include "queue/auth.h"
#include "store/schema.h"
#include "store/claims.h"
#include "tensors/tensors.h"

/* The request's identity, as the kernel would check a create through the mount. */
static void who_of(fuse_req_t req, struct tfs_quser *who)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	int ng;

	memset(who, 0, sizeof(*who));
	who->uid = ctx->uid;
	who->gid = ctx->gid;
	ng = fuse_req_getgroups(req, TFS_QUSER_GROUPS, who->groups);
	who->ngroups = ng > 0 ? (ng < TFS_QUSER_GROUPS ? ng : TFS_QUSER_GROUPS) : 0;
}

static double ms(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) * 1e-6;
}

/* Entry e's path under dir: 0 or -ENAMETOOLONG. */
static int entry_path(const char *dir, const struct tfs_mk_entry *e, char *out, size_t size)
{
	int n = dir[0] ? snprintf(out, size, "%s/%.*s", dir, (int)e->len, e->name)
		       : snprintf(out, size, "%.*s", (int)e->len, e->name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Makes q's tensors in dir (record d), the first of them self (named base, node self_ino:
 * the tensor the request came on, shaped as a setxattr of its shape by pid would) when q asks for that:
 * 0 with q->made and q->err set, or -EINVAL for a device the mount does not serve or a
 * first entry that is not self's name (nothing made). Caller holds ns. */
static int make_all(struct tfs_mk_req *q, size_t used, const char *dir,
		     const struct tfs_dirrec *d, const struct tfs_quser *who,
		     struct tfsd_tensor *self, uint64_t self_ino, const char *base, pid_t pid,
		     struct tfs_store_claim **claims)
{
	char path[TFS_PATH_MAX];
	struct tfs_mk_entry e;
	uint32_t n, claimed, first = (q->flags & TFS_MK_SELF) ? 1 : 0, gid = who->gid,
		 mode = q->mode & 0777;
	int device = (q->flags & TFS_MK_DEVICE) ? q->device : d->has_device ? d->device
									  : tfs_mem.device;
	size_t off = 0;
	struct timespec t0, t1, t2;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((q->flags & TFS_MK_DEVICE) && !tfs_device_served(device))
		return -EINVAL;
	if (first) {
		tfs_mk_next(q->data, used, &off, &e);
		if (e.len != strlen(base) || memcmp(e.name, base, e.len))
			return -EINVAL;
	}
	tfs_store_dir_inherit(d, 0, &gid, &mode);
	/* Every claim first, in one round trip; the first refused ends the batch there. */
	tfs_store_claims_begin();
	for (claimed = first; claimed < q->count; claimed++) {
		tfs_mk_next(q->data, used, &off, &e);
		if ((rc = entry_path(dir, &e, path, sizeof(path))) ||
		    (rc = tfs_qauth_dir_write(who, d)) ||
		    (rc = tfs_tensor_claim(path, device, who->uid, d, &claims[claimed])))
			break;
	}
	tfs_store_claims_end();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Then self, shaped; then each tensor, awaiting its claim; the first that fails ends
	 * the batch there, before a refused claim's entry if that came first. */
	off = 0;
	if (first) {
		int src;

		tfs_mk_next(q->data, used, &off, &e);
		if ((src = tfs_tensor_shape(self, e.dtype, &e.shape, pid)) == 0) {
			q->made = 1;
			tfs_kcache_forget_attr(self_ino);    /* its size: the kernel saw 0 */
		} else {
			rc = src;
		}
	}
	for (n = first; n < claimed; n++) {
		struct tfsd_tensor *t;
		int mrc = 0;

		tfs_mk_next(q->data, used, &off, &e);
		entry_path(dir, &e, path, sizeof(path));
		if (q->made == n)
			mrc = tfs_tensor_create_claimed(claims[n], path, e.dtype, &e.shape, device,
							who->uid, gid, mode, d, 0, &t);
		else
			tfs_tensor_claim_drop(path, claims[n]);
		if (q->made == n && mrc == 0) {
			q->made++;
			/* the kernel may still know a tensor gone before it under the name */
			tfs_kcache_forget(path);
		} else if (q->made == n) {
			rc = mrc;
		}
	}
	if (q->made > first) {
		/* path: the last entry the loop above saw, in dir as all of them */
		tfs_ops_dir_changed(path, 0);
		tfs_kcache_forget_dir(dir);     /* the kernel saw no create */
	}
	q->err = -rc;
	clock_gettime(CLOCK_MONOTONIC, &t2);
	tfs_log(LOG_DEBUG, "MKBATCH /%s: %u of %u made%s%s (%.2f ms to claim, %.2f ms to make)",
		dir, q->made, q->count, rc ? ": " : "", rc ? strerror(-rc) : "", ms(&t0, &t1),
		ms(&t1, &t2));
	return 0;
}

int tfs_op_mkbatch(fuse_req_t req, fuse_ino_t ino, struct tfs_file *f, const void *in,
		   size_t in_size, size_t out_size)
{
	struct tfs_store_claim **claims = NULL;
	struct tfs_mk_req *q = NULL;
	char dir[TFS_PATH_MAX];
	struct tfs_quser who;
	struct tfs_dirrec d;
	const char *base;
	size_t used;
	int rc;

	if (in_size != sizeof(*q) || out_size != sizeof(*q))
		return -EINVAL;
	if (!f->t)
		return -EREMOTE;          /* another node's tensor: its directory is not here */
	if (!f->writable)
		return -EBADF;
	/* Only on the file whose open created the tensor: that create is what the kernel
	 * checked (a read-only mount, a security module's rules on making files there, the
	 * walk to the directory). Any writable descriptor would let its holder make tensors
	 * wherever that tensor went, and past a sandbox that forbids making files. */
	if (!f->created)
		return -EPERM;
	q = malloc(sizeof(*q));
	if (!q)
		return -ENOMEM;
	memcpy(q, in, sizeof(*q));
	if ((rc = tfs_mk_check(q, in_size, &used)))
		goto out;
	q->made = 0;
	q->err = 0;
	claims = calloc(q->count, sizeof(*claims));
	if (!claims) {
		rc = -ENOMEM;
		goto out;
	}
	who_of(req, &who);
	tfs_ns_lock();
	/* The directory the tensor was made in, which it has not left: under ns, its name
	 * cannot change meanwhile. */
	if (!f->t->linked) {
		rc = -ENOENT;
	} else if (strcmp(f->t->name, f->created)) {
		rc = -EPERM;
	} else {
		tfs_split(f->t->name, dir, sizeof(dir), &base);
		rc = tfs_store_dir(dir, &d);
	}
	if (rc == 0)
		rc = make_all(q, used, dir, &d, &who, f->t, ino, base, fuse_req_ctx(req)->pid,
			      claims);
	tfs_ns_unlock();
	if (rc == 0)
		fuse_reply_ioctl(req, 0, q, sizeof(*q));
out:
	free(claims);
	free(q);
	return rc;
}
