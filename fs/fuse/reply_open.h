/* Replies to OPEN and CREATE that carry open flags libfuse 3.14 has no field for
 * (reply_open.c). Private to the operations. */
#ifndef TFS_REPLY_OPEN_H
#define TFS_REPLY_OPEN_H

#include <fuse_lowlevel.h>

/* As fuse_reply_open / fuse_reply_create, and, where fi->direct_io is set, with
 * FOPEN_PARALLEL_DIRECT_WRITES: the kernel then lets writes to one file from several
 * threads or processes reach the daemon together (a shared inode lock, as O_DIRECT on
 * ext4) instead of one at a time, unless a write extends the file or appends. The daemon
 * copies each write under the tensor's io lock taken shared (ops_file.c), so overlapping
 * concurrent writes may interleave, as with O_DIRECT on a local file system.
 * Returns what fuse_reply_buf returns: 0, or -ENOENT when the request was interrupted
 * (the kernel has not got the file handle: the caller releases it). No locks. */
int tfs_reply_open(fuse_req_t req, const struct fuse_file_info *fi);
int tfs_reply_create(fuse_req_t req, const struct fuse_entry_param *e,
		     const struct fuse_file_info *fi);

#endif
