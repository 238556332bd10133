/* What each owner has on this node (quota.c): its tensors and the queue holds it took,
 * counted as the table and the holders change, against tfs_limits; and the bounds of a
 * new path. Every function here runs under ns. uid 0 is counted and never refused. */
#ifndef TFS_QUOTA_H
#define TFS_QUOTA_H

#include <stdint.h>
#include <sys/types.h>

/* What one local user may make the daemon and Redis hold (docs/tensorfs.8), set by main
 * from the -o max_* options before serving: each refused with its errno. uid 0 is bound
 * by none of the per-owner ones, as disk quotas do not bind it. */
struct tfs_limits {
	uint64_t holds;              /* queue holds of one tensor: EMLINK */
	uint64_t user_holds;         /* holds one per-user sender has, all tensors: EDQUOT */
	uint64_t path;               /* bytes of a path under the mount: ENAMETOOLONG */
	uint64_t depth;              /* its components: ENAMETOOLONG */
	uint64_t xattr_file;         /* user.* names and values of one file or directory:
	                                ENOSPC (fuse/xattr.c) */
	uint64_t xattr_user;         /* the same of all of one owner's: EDQUOT */
	uint64_t user_tensors;       /* tensors one owner has on this node: EDQUOT */
};
extern struct tfs_limits tfs_limits;

/* The path a new name would have (no leading slash): -ENAMETOOLONG past max_path bytes
 * or max_depth components, else 0. */
int tfs_quota_path(const char *name);
/* Whether uid may make one more tensor: 0 or -EDQUOT. */
int tfs_quota_tensor_check(uid_t uid);
/* Whether the sender uid (-1: the shared queue, trusted) may take n more holds: 0 or
 * -EDQUOT. */
int tfs_quota_holds_check(int64_t uid, int64_t n);
/* uid's counts move by n (table.c on insert and remove, tensor.c on chown; holders.c,
 * adopt.c). A count never goes below 0; an owner with nothing left is forgotten. A
 * failed allocation leaves that owner uncounted (logged once). */
void tfs_quota_tensors(uid_t uid, int64_t n);
void tfs_quota_holds(int64_t uid, int64_t n);

#endif
