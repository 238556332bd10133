/* What the FUSE operations (ops_file.c, ops_dir.c, ops_xattr.c, ops_table.c) share: how a
 * node is resolved to what it names, and how attributes are reported. Private to them.
 *
 * The operations use libfuse's low-level API: requests name nodes by id (node.h), which
 * they turn into paths, the daemon's names for everything in Redis. Metadata operations
 * run under ns; read and write copy bytes under the tensor's io lock only. */
#ifndef TFS_OPS_H
#define TFS_OPS_H

#include <fuse_lowlevel.h>
#include <sys/stat.h>

#include "kernel/kernel_cache.h"
#include "store/store.h"
#include "tensors/tensor.h"
#include "kernel/node.h"

/* What the operations are told at start-up (main.c) and find out at init (ops_table.c). */
struct tfs_fuse_conf {
	int threads;                 /* FUSE workers (--threads) */
	int page_cache;              /* --page-cache: no direct_io (measurement only) */
	int splice_reads;            /* read replies splice from the backend (ops_file.c) */
};
extern struct tfs_fuse_conf tfs_fuse;

/* How long the kernel may keep attributes: a second (see op_init). */
#define TFS_ATTR_TIMEOUT 1.0

/* What a node names. kind: 'l' local tensor (t), 'r' another node's tensor (m),
 * 'd' directory (d), 'g' a garbled record. */
struct tfs_target {
	int kind;
	struct tfsd_tensor *t;
	struct tfs_meta m;
	struct tfs_dirrec d;
};

/* Resolves a path (no leading slash) or, for a detached node, its unlinked tensor's key:
 * 0, -ENOENT (also when the path holds another object than w's node: tfs_where_is) or
 * -EIO. Caller holds ns. */
int tfs_ops_resolve(const struct tfs_where *w, struct tfs_target *x);
int tfs_ops_resolve_path(const char *path, struct tfs_target *x);

/* The attributes of what x names, st_ino set to id (0: the record's inode number, the
 * node id a lookup then asks for). */
void tfs_ops_stat(const struct tfs_target *x, uint64_t id, struct stat *st);
void tfs_ops_stat_tensor(struct tfsd_tensor *t, uint64_t id, struct stat *st);

/* The entry of a LOOKUP, MKDIR, MKNOD or CREATE reply for name in parent, with attributes
 * st: the node is looked up (one FORGET owed, given back by tfs_ops_reply_entry if the
 * reply does not arrive) and the entry kept for tfs_kcache_entry_timeout(). 0 or -ENOMEM.
 * Caller holds ns, the lock under which st was read: the node table then changes in the
 * order the names do, so a name the queue removes or replaces a moment later detaches this
 * node instead of finding it not there yet (a later attach would give the name a node
 * whose object is gone, and a following lookup would take the node, and with it an open
 * file's tensor, away from it). */
int tfs_ops_entry(uint64_t parent, const char *name, const struct stat *st,
		  struct fuse_entry_param *e);
/* Sends e, without ns. */
void tfs_ops_reply_entry(fuse_req_t req, const struct fuse_entry_param *e);

/* An entry path was added to or removed from its directory: the directory's mtime and
 * ctime move (as POSIX wants), and its subdirectory count by nsub. Caller holds ns. */
void tfs_ops_dir_changed(const char *path, int nsub);

/* The answer to req where rc is what its node gave: -ESTALE, for a node that names
 * nothing any more, becomes what stale.h says (ESTALE for the VFS to look again, ENOENT on
 * its retry); 0 ends the calling thread's retry, unless walk: a GETATTR, which the VFS
 * sends on its way to the call it retries (permission checks of the directories and of
 * the file it opens). Other values pass through. */
int tfs_ops_answer(fuse_req_t req, int rc, int walk);

/* Around the copy of a write's bytes into t (a write, a fill): before it, a caller without
 * CAP_FSETID clears set-user-ID and set-group-ID, as the kernel does (takes ns; returns 1
 * when it did); after it, the times move and, where tfs_ops_write_suid returned 1, the
 * kernel forgets the attributes of ino. No lock held by the caller. */
int tfs_ops_write_suid(fuse_req_t req, struct tfsd_tensor *t);
void tfs_ops_written(fuse_ino_t ino, struct tfsd_tensor *t, int killed);

/* The directory record of the root as last seen (a stand-in while Redis is away). */
void tfs_ops_root_seen(struct tfs_dirrec *d, int set);

/* The operations table (ops_table.c), for fuse_session_new. */
extern const struct fuse_lowlevel_ops tfs_ops;

/* The operation tables' parts. */
void tfs_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void tfs_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void tfs_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets);
void tfs_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void tfs_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void tfs_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void tfs_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		   const char *newname, unsigned int flags);
void tfs_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void tfs_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
void tfs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void tfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void tfs_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void tfs_op_statfs(fuse_req_t req, fuse_ino_t ino);

void tfs_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void tfs_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		    struct fuse_file_info *fi);
void tfs_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);
void tfs_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		   struct fuse_file_info *fi);
void tfs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void tfs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void tfs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi);
/* The pull ioctl (core/pull_ioctl.h, ops_pull.c), which tfs_op_ioctl hands on. */
void tfs_op_pull(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, unsigned flags,
		 const void *in_buf, size_t in_bufsz);
void tfs_op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		  struct fuse_file_info *fi, unsigned flags, const void *in_buf,
		  size_t in_bufsz, size_t out_bufsz);
void tfs_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		  struct fuse_file_info *fi);
void tfs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void tfs_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
		      struct fuse_file_info *fi);

void tfs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void tfs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		     size_t size, int flags);
void tfs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void tfs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif
