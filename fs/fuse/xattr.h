/* Extended attributes (xattr.c): what user.tensor.* and the user's own names mean */
#ifndef TFS_XATTR_H
#define TFS_XATTR_H

#include <stddef.h>
#include <sys/types.h>

/* What each means (docs/files.md); w: a path or an unlinked tensor's key (node.h). The high-level
 * conventions: a length or a negative errno; size 0 asks for the length. They take ns. */
struct tfs_where;
int tfs_xattr_get(const struct tfs_where *w, const char *name, char *value, size_t size);
/* uid: the caller's (revoking holds is the owner's or root's). A user attribute past
 * max_xattr_file is -ENOSPC, past its owner's max_xattr_user -EDQUOT. */
int tfs_xattr_set(const struct tfs_where *w, const char *name, const char *value, size_t size,
		  int flags, pid_t pid, uid_t uid);
int tfs_xattr_list(const struct tfs_where *w, char *list, size_t size);
int tfs_xattr_remove(const struct tfs_where *w, const char *name);

#endif
