/* What a per-user queue command may do (auth.c): the checks the kernel makes through
 * the mount (default_permissions), made for the sender's identity on Redis's records. */
#ifndef TFS_QUEUE_AUTH_H
#define TFS_QUEUE_AUTH_H

#include "meta.h"
#include "queue/users.h"
#include "store/store.h"

/* Each returns 0 when who may, -EACCES or -EPERM when not, -ENOENT / -EIO when a
 * directory on the way cannot be read. who NULL: a trusted sender (the shared queue),
 * always 0. Caller holds ns (directory records come from the cache or Redis). */
/* What a name that was not found may tell who: -EACCES when a directory above it that
 * exists may not be searched (the mount says so too: nothing about what lies below),
 * else -ENOENT. */
int tfs_qauth_search(const struct tfs_quser *who, const char *name);
/* Create name: search on every directory above it, write on parent (its record). */
int tfs_qauth_create(const struct tfs_quser *who, const char *name,
		     const struct tfs_dirrec *parent);
/* Create in the directory whose record is parent, reached by a descriptor (the batch
 * create, fs/fuse/ops_mkbatch.c): write and search on it, as the kernel checks a create
 * through an open directory; nothing above it. */
int tfs_qauth_dir_write(const struct tfs_quser *who, const struct tfs_dirrec *parent);
/* Get name (tensor metadata m): search on the way, read on the tensor. */
int tfs_qauth_get(const struct tfs_quser *who, const char *name, const struct tfs_meta *m);
/* Unlink name (tensor metadata m): search on the way, write on the parent and, when the
 * parent is sticky, owning the tensor or the parent. */
int tfs_qauth_unlink(const struct tfs_quser *who, const char *name, const struct tfs_meta *m);

#endif
