/* The ioctl by which a process asks the daemon to fill part of a tensor with the bytes of
 * another node's tensor: the daemon asks the owning node itself (fs/net/net.h) and copies
 * what arrives straight into the tensor's memory, where read() and write() through the
 * mount would carry every byte through two FUSE requests and the caller's buffer.
 * tensorctl cp uses it (tools/tensorctl/cmd_cp.c); the daemon serves it
 * (fs/fuse/ops_pull.c).
 *
 * The ABI between the two:
 *  - Issued on the destination tensor's file, opened for writing, of this node's.
 *  - path names the source under the same mount (no leading slash, pathlen bytes, no NUL
 *    needed); ino its inode number as stat showed it (0: not checked), so that a name
 *    renamed over meanwhile fails with ESTALE instead of copying another tensor.
 *  - The caller's uid and gids go with the request: the owning node checks its read
 *    permission as its own mount would.
 *  - All of len is filled, or the call fails: 0 or -1 with errno. A failure may leave part
 *    of the range written. EXDEV: the source is this node's own (copy it with read and
 *    write); ENOTTY: an older daemon; EREMOTE: no cluster key, or the node publishes no
 *    address; ECONNRESET, ETIMEDOUT, EACCES: as fs/net/net.h says; ENODATA: the source
 *    ends before src_off + len.
 *  - dst_off + len must lie inside the tensor (EINVAL otherwise); len at most
 *    TFS_PULL_MAX. */
#ifndef TFS_PULL_IOCTL_H
#define TFS_PULL_IOCTL_H

#include <linux/ioctl.h>
#include <stdint.h>

#define TFS_PULL_PATH 4000

struct tfs_pull_req {
	uint64_t ino;
	uint64_t src_off;
	uint64_t dst_off;
	uint64_t len;
	uint32_t flags;         /* 0; anything else is EINVAL */
	uint32_t pathlen;
	char path[TFS_PULL_PATH];
};

#define TFS_PULL_MAX ((uint64_t)64 << 20)

#define TFS_IOC_PULL _IOW(0xF7, 0x02, struct tfs_pull_req)

#endif
