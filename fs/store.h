/* The Redis key layout and the records of directories and names (store.c): every key
 * format lives here */
#ifndef TFS_STORE_H
#define TFS_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "dtype.h"
#include "meta.h"

struct tfs_writer_call;

/* Room for any key: a prefix, a kind, a path of up to 4095 bytes. */
#define TFS_KEYMAX 4400
/* <prefix>:<kind>:<name> into buf; -ENAMETOOLONG when it does not fit. */
int tfs_key(char *buf, size_t size, const char *kind, const char *name);
/* The parent directory of name ("" for the root) and the last component. */
void tfs_split(const char *name, char *parent, size_t psize, const char **base);

/* Reads a tensor record: 0, -ENOENT, -EIO, -EBADMSG (garbage: logged). */
int tfs_store_tensor(const char *name, struct tfs_meta *m);
/* Reads a directory record. 0 / -ENOENT / -EIO. */
struct tfs_dirrec {
	uint32_t mode, uid, gid;
	int64_t ctime, mtime;
	int has_dtype, has_device;
	tfs_dtype dtype;
	int device;
};
int tfs_store_dir(const char *name, struct tfs_dirrec *d);
int tfs_store_dir_write(const char *name, const struct tfs_dirrec *d);
/* Adds name to its parent's entries ('t' tensor, 'd' dir): -EEXIST when taken,
 * -ENOENT when the parent directory does not exist. */
int tfs_store_link(const char *name, char type);
/* tfs_store_link in two halves: the checks and the claim sent (0 with *claim set, or the
 * errors above but -EEXIST), then its answer awaited (0, -EEXIST or -EIO). parent_rec:
 * the parent's record, which the caller read under ns just before (so it exists); NULL:
 * read it here. */
int tfs_store_link_send(const char *name, char type, const struct tfs_dirrec *parent_rec,
		      struct tfs_writer_call **claim);
int tfs_store_link_wait(const char *name, char type, struct tfs_writer_call *claim);
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
/* Moves directory from and everything under it to to (which must not exist): -EREMOTE
 * when another node's tensor is inside, -EEXIST, -EIO. Caller holds ns. */
int tfs_store_move_dir(const char *from, const char *to);
/* dir + "/" + name (just name when dir is ""), malloc'd; NULL when out of memory. */
char *tfs_path_join(const char *dir, const char *name);

#endif
