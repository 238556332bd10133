/* Element types: names, sizes and DLPack codes. Pure functions, no I/O. */
#ifndef TFS_DTYPE_H
#define TFS_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "tensorfs.h"

/* Parses a dtype name (len bytes, no NUL needed): the canonical names of docs/contract.md and
 * numpy-style aliases (float32, int8, bfloat16, ...). Surrounding whitespace and one
 * trailing newline are ignored, since `setfattr -v` and `echo` users add them.
 * Returns 0 and sets *out, or -EINVAL. */
int tfs_dtype_parse(const char *s, size_t len, tfs_dtype *out);
/* Canonical name ("f32"); "?" for a value out of range. */
const char *tfs_dtype_name(tfs_dtype dt);
/* Bytes per element; 0 for a value out of range. */
size_t tfs_dtype_size(tfs_dtype dt);
/* DLPack type code (kDLInt=0, kDLUInt=1, kDLFloat=2, kDLBfloat=4, kDLBool=6, DLPack 1.1's
 * kDLFloat8_e4m3fn=10 and kDLFloat8_e5m2=12) and bits. */
int tfs_dtype_dlpack(tfs_dtype dt, uint8_t *code, uint8_t *bits);

#endif
