/* A new tensor file of a tensorfs mount typed and sized through its extended attributes,
 * which is what allocates its memory: the library's loads and copies and tensorctl create
 * share it. */
#ifndef TFS_TYPED_H
#define TFS_TYPED_H

#include "dtype.h"
#include "shape.h"

/* Sets dt and sh on the tensor file, through fd when fd >= 0 (fsetxattr), else through
 * path (setxattr). In one request, "DTYPE [SHAPE]" in user.tensor.shape: two would make the
 * kernel ask for the attributes again between them. A daemon that predates that form
 * answers EINVAL; then *untyped is set (atomically: a load's threads share it) and the two
 * attributes are set apart, as they are at once while *untyped is set. untyped may be NULL:
 * nothing is remembered, the one request is tried first each time. 0, or -errno with what
 * (wsize bytes) saying what failed, for the caller's message: "dtype f32", "allocate f32
 * [4,8] (128 bytes)" (the allocation's error: ENOSPC, EFBIG), or "shape" with
 * -ENAMETOOLONG when the shape's text does not fit. Nothing is undone on failure: the
 * caller removes the file it made. */
int tfs_set_type(int fd, const char *path, tfs_dtype dt, const struct tfs_shape *sh,
		 int *untyped, char *what, size_t wsize);

#endif
