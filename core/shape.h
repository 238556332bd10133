/* Tensor shapes: parsing the text users give, formatting, byte counts. No I/O. */
#ifndef TFS_SHAPE_H
#define TFS_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "tensorfs.h"

struct tfs_shape {
	int ndim;                      /* 0 for a scalar */
	uint64_t dims[TFS_MAX_DIMS];
};

/* Accepts JSON array text "[2,3,4]", "[]" (scalar), or a bare list "2,3,4", with spaces
 * anywhere between tokens and one trailing newline. Each dim is a decimal integer >= 0.
 * Returns 0, or -EINVAL (syntax, negative, non-integer, empty value) or -E2BIG (more than
 * TFS_MAX_DIMS dims). *out is written only on success. */
int tfs_shape_parse(const char *s, size_t len, struct tfs_shape *out);
/* A shape with its dtype ahead, as user.tensor.shape also takes it so that a tensor is
 * typed and sized in one request: "DTYPE SHAPE" ("bf16 [4096,1024]"), the dtype a name
 * tfs_dtype_parse takes, then one or more spaces, then what tfs_shape_parse takes. A value
 * that starts (after spaces) with a digit or '[' is a plain shape: 1 with *sh set, *dt
 * untouched. 0 with both set for a typed one; -EINVAL (an unknown dtype, no space after it,
 * a bad shape) or -E2BIG. Nothing is written on failure. */
int tfs_shape_parse_typed(const char *s, size_t len, tfs_dtype *dt, struct tfs_shape *sh);
/* "[2,3,4]" into buf; returns the length, or -ENAMETOOLONG when buf is too small. */
int tfs_shape_format(const struct tfs_shape *sh, char *buf, size_t size);
/* Elements in the shape, times itemsize. -EOVERFLOW when the product does not fit in a
 * signed 64-bit file size. */
int tfs_shape_bytes(const struct tfs_shape *sh, size_t itemsize, uint64_t *bytes);
/* A 1-D shape [n]. */
void tfs_shape_1d(struct tfs_shape *sh, uint64_t n);
int tfs_shape_equal(const struct tfs_shape *a, const struct tfs_shape *b);

#endif
