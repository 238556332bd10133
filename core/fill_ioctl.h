/* The ioctl by which a process asks the daemon to fill part of a tensor from a file that
 * the process has open: the daemon reads the file itself, straight into memory its device
 * copies from, where a write() through the mount would carry every byte through the
 * kernel's FUSE request once more and the daemon's staging copy after it. libtensorfs's
 * loads through the mount use it (load_pipe.c); the daemon serves it (fs/fuse/ops_fill.c).
 *
 * The ABI between the two, shared by both sides of this repository:
 *  - Issued on a tensor's file opened for writing. The kernel passes a restricted ioctl
 *    (the size below, encoded in the number) to the FUSE server as it is.
 *  - The daemon takes the caller's own open file (pidfd_getfd), never opening the file
 *    again, and reads only from one open for reading (EBADF for O_PATH or write-only), so
 *    it reads what the caller could read from its descriptor. It checks that it is the
 *    file the caller named (dev and ino as the caller's fstat saw them): ESTALE otherwise.
 *    Only regular files (EINVAL) of local file systems (EXDEV: FUSE, network, stacked, or
 *    a mount the daemon cannot see; fs/util/mountinfo.h).
 *  - All of len is filled, or the call fails: 0 or -1 with errno. A failure may leave part
 *    of the range written. Callers fall back to write() on any failure: EBUSY (as many
 *    fills running as the daemon allows), EXDEV, EBADF, EACCES (the daemon may not take the
 *    caller's file), ESTALE, ENOTTY (an older daemon), ENODATA (the file ends before
 *    src_off + len).
 *  - The range must lie inside the tensor (EINVAL otherwise: a fill never changes the
 *    size); len at most TFS_FILL_MAX. */
#ifndef TFS_FILL_IOCTL_H
#define TFS_FILL_IOCTL_H

#include <linux/ioctl.h>
#include <stdint.h>

struct tfs_fill_req {
	int32_t fd;             /* the file, in the calling process */
	uint32_t flags;         /* 0; anything else is EINVAL */
	uint64_t dev, ino;      /* its st_dev and st_ino */
	uint64_t src_off;       /* where the bytes start in the file */
	uint64_t dst_off;       /* where they go in the tensor */
	uint64_t len;
};

#define TFS_FILL_MAX ((uint64_t)64 << 20)

#define TFS_IOC_FILL _IOW(0xF7, 0x01, struct tfs_fill_req)

#endif
