/* The batch create ioctl's daemon side (core/mkbatch.h). */
#ifndef TFS_OPS_MKBATCH_H
#define TFS_OPS_MKBATCH_H

#include <fuse_lowlevel.h>

#include "tensors/tensor.h"

/* Serves TFS_IOC_MKBATCH issued on f, a tensor's open file (node ino): replies itself and returns
 * 0, or returns a negative errno for the caller to reply (nothing made): -EINVAL for a
 * request the ABI refuses or a device not served, -EBADF for a file not open for writing,
 * -EPERM for one whose open did not create the tensor, or a tensor renamed since,
 * -EREMOTE for another node's tensor, -ENOENT for a tensor removed since it was opened,
 * -ENOMEM, -EIO. Takes ns; the caller holds no lock. */
int tfs_op_mkbatch(fuse_req_t req, fuse_ino_t ino, struct tfs_file *f, const void *in,
		   size_t in_size, size_t out_size);

#endif
