/* Directories and their entries in Redis (store.c): records, listings, rmdir, moves.
 * The key layout is schema.h's. */
#ifndef TFS_STORE_H
#define TFS_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

#include "store/schema.h"

/* Reads a directory record. 0 / -ENOENT / -EIO. */
int tfs_store_dir(const char *name, struct tfs_dirrec *d);
/* What a directory is when nothing says otherwise (the root of a fresh Redis, a parent
 * written back for a tensor, a field missing from a record): mode 0755, owned by the
 * daemon's user and group, as a FUSE mount's root belongs to whoever mounted it (root
 * for a daemon run by root). Times 0. */
void tfs_store_dir_default(struct tfs_dirrec *d);
/* What a new entry takes from its directory's record parent, as ext4 does: in a
 * set-group-ID directory its group is the directory's, and a subdirectory (is_dir) is
 * set-group-ID too. *gid and *mode (the creator's) change only then. The kernel has
 * already dropped a file's own set-group-ID where its creator may not keep it. */
void tfs_store_dir_inherit(const struct tfs_dirrec *parent, int is_dir, uint32_t *gid,
			   uint32_t *mode);
int tfs_store_dir_write(const char *name, const struct tfs_dirrec *d);
int tfs_store_unlink(const char *name);
/* Looks up the entry type of name in its parent: 't', 'd', or -ENOENT. */
int tfs_store_type(const char *name);
/* The entries of directory name: its HGETALL reply (the caller frees it), or -ENOENT,
 * -ENOTDIR, -EIO. */
int tfs_store_dir_entries(const char *name, redisReply **out);
/* rmdir: -ENOTDIR, -ENOTEMPTY, -ENOENT, -EBUSY (the root), -EIO. */
int tfs_store_rmdir(const char *name);
/* Removes a tensor record and its name, for records with no tensor behind them. */
int tfs_store_remove_tensor(const char *name);
/* A tree move's marker key (<prefix>:move:<node>:<id>), which says whether it ran. */
void tfs_store_move_marker(char *buf, size_t size, uint64_t id);
/* Moves directory from and everything under it to to (which must not exist) in one
 * script, records, entries and this node's caches: 0, -ENOENT (from is no directory, or
 * to's parent is gone), -EEXIST, -EREMOTE (another node's tensor is inside),
 * -ENAMETOOLONG (a path would pass max_path bytes or max_depth components), -ECANCELED
 * (marker was settled already), -ENOMEM, -EPROTO (Redis refused: nothing moved), -EIO:
 * the answer was lost, the move may have run or may still run: settle it with
 * tfs_store_move_settle once Redis answers. Tensors of the table are the caller's to
 * rename. Caller holds ns. */
int tfs_store_move_tree(const char *from, const char *to, const char *marker,
			uint64_t max_path, uint64_t max_depth);
/* Settles a move whose answer was lost: 1 it ran (this node's caches follow), 0 it did not
 * and never will, -EIO. Caller holds ns. */
int tfs_store_move_settle(const char *marker, const char *from, const char *to);
/* An entry of directory name (whose record the caller just read into d) was added or
 * removed: its mtime and ctime become now and its count of subdirectories moves by nsub.
 * Queued: 0, -ENOMEM or -ENAMETOOLONG. */
int tfs_store_dir_changed(const char *name, struct tfs_dirrec *d, int nsub);
/* tfs_store_dir_changed(name, record, 0) with the record the directory cache holds, read
 * nowhere else: with none cached, only the times are written (and moved in the mirror's
 * copy, if it has one). For a caller that knows the directory exists and must not wait
 * for Redis (the queue's last write of a group). Queued: 0, -ENOMEM or -ENAMETOOLONG. */
int tfs_store_dir_touch(const char *name);

#endif
