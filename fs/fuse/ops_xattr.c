/* The FUSE extended-attribute operations: what they mean is xattr.c's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuse/ops.h"
#include "fuse/stats_xattr.h"
#include "fuse/xattr.h"

/* A getxattr or listxattr reply: the size alone when asked with size 0. */
static void reply_value(fuse_req_t req, int rc, const char *buf, size_t size)
{
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)rc);
	else
		fuse_reply_buf(req, buf, (size_t)rc);
}

/* Where ino is is read before the xattr call takes ns, and the queue may remove the name
 * in between: the path then holds nothing or another object (-ENOENT), while the node,
 * read again, names what it names now (the unlinked tensor of an open file). A second
 * -ENOENT is the node's own. */
#define XATTR_TRIES 2

/* getxattr of name, or listxattr when name is NULL. */
static void get_value(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct tfs_where w;
	char *buf = NULL;
	int rc = size && !(buf = malloc(size)) ? -ENOMEM : -ENOENT;

	for (int i = 0; i < XATTR_TRIES && rc == -ENOENT; i++) {
		if ((rc = tfs_node_where(ino, &w)) == 0)
			rc = name ? tfs_xattr_get(&w, name, buf, size) :
			     tfs_xattr_list(&w, buf, size);
		tfs_where_free(&w);
	}
	reply_value(req, tfs_ops_answer(req, rc == -ENOENT ? -ESTALE : rc, 0), buf, size);
	free(buf);
}

/* The daemon's counters (stats.h): read-only, on the root only, not listed. */
static void get_stats(fuse_req_t req, size_t size)
{
	char *buf = NULL;
	int rc = size && !(buf = malloc(size)) ? -ENOMEM : tfs_stats_json(buf, size);

	reply_value(req, rc, buf, size);
	free(buf);
}

void tfs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	if (tfs_stats_is_xattr(ino, name))
		get_stats(req, size);
	else
		get_value(req, ino, name, size);
}

void tfs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	get_value(req, ino, NULL, size);
}

void tfs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		     size_t size, int flags)
{
	struct tfs_where w;
	int rc = -ENOENT;

	if (tfs_stats_is_xattr(ino, name)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	for (int i = 0; i < XATTR_TRIES && rc == -ENOENT; i++) {
		if ((rc = tfs_node_where(ino, &w)) == 0)
			rc = tfs_xattr_set(&w, name, value, size, flags, fuse_req_ctx(req)->pid,
					   fuse_req_ctx(req)->uid);
		tfs_where_free(&w);
	}
	/* A reshape changes the size, which the kernel keeps (it only marks ctime stale
	 * after a setxattr): its next stat must ask, not answer from what it has. The
	 * user's own attributes and the written mark (user.tensorfs.event) change neither. */
	if (rc == 0 && strncmp(name, "user.tensor.", 12) == 0)
		tfs_kcache_forget_attr(ino);
	fuse_reply_err(req, -tfs_ops_answer(req, rc == -ENOENT ? -ESTALE : rc, 0));
}

void tfs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct tfs_where w;
	int rc = -ENOENT;

	if (tfs_stats_is_xattr(ino, name)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	for (int i = 0; i < XATTR_TRIES && rc == -ENOENT; i++) {
		if ((rc = tfs_node_where(ino, &w)) == 0)
			rc = tfs_xattr_remove(&w, name);
		tfs_where_free(&w);
	}
	fuse_reply_err(req, -tfs_ops_answer(req, rc == -ENOENT ? -ESTALE : rc, 0));
}
