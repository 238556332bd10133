/* Parsers and writers of the file formats tfs_load and tfs_save read and write: NumPy .npy
 * and .safetensors. No I/O: bytes in, values out (unit-tested in tests/unit/test_formats.c).
 * Errors are negative errno values with a reason in why. */
#ifndef TFS_FORMATS_H
#define TFS_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "shape.h"
#include "tensorfs.h"

/* ---- .npy ---- */
#define NPY_PREFIX 12          /* magic(6) + version(2) + header length (2 or 4) */

struct npy_info {
	tfs_dtype dtype;
	struct tfs_shape shape;
	uint64_t data_off;     /* where the array bytes start */
	uint64_t bytes;        /* dtype size x product(shape) */
};

/* From the first min(n, NPY_PREFIX) bytes of a file: the size of the whole header (magic
 * included), i.e. where the data begins. -EBADMSG when not an .npy file. */
int tfs_npy_header_size(const uint8_t *b, size_t n, uint64_t *hsize);
/* Parses a whole header (b holds hsize bytes as tfs_npy_header_size gave). -EBADMSG for a
 * malformed header, -ENOTSUP for Fortran order, big-endian or a dtype tensorfs lacks. */
int tfs_npy_parse(const uint8_t *b, size_t n, struct npy_info *out, char *why, size_t whylen);
/* Writes a version 1.0 header (or 2.0 when it does not fit) as numpy.save does, padded so
 * the data starts on a 64-byte boundary. Returns the header length, -ENOTSUP for a dtype
 * numpy lacks (bf16, fp8), -ENOSPC when size is too small. */
long tfs_npy_format(tfs_dtype dt, const struct tfs_shape *sh, uint8_t *buf, size_t size);

/* ---- .safetensors ---- */
#define ST_MAX_HEADER (100u << 20)   /* the reference implementation's limit */

struct st_entry {
	char *name;
	tfs_dtype dtype;
	struct tfs_shape shape;
	uint64_t begin, end;   /* byte range inside the data section */
};

struct st_header {
	size_t n;
	struct st_entry *e;    /* in data order (sorted by begin) */
	char *metadata;        /* the "__metadata__" object as JSON text, or NULL */
};

/* The header length from the first 8 bytes, checked against the file size. */
int tfs_st_header_len(const uint8_t first8[8], uint64_t file_size, uint64_t *hlen);
/* Parses the JSON header (len bytes) of a file whose data section holds data_size bytes.
 * Checks every entry: known dtype, shape, offsets inside the data, ranges that match the
 * shape, do not overlap and cover the data without holes. -EBADMSG/-ENOTSUP with why. */
int tfs_st_parse(const char *json, size_t len, uint64_t data_size, struct st_header *h,
	     char *why, size_t whylen);
void tfs_st_free(struct st_header *h);
/* Orders entries as the safetensors library writes them (larger itemsize first, then by
 * name) and assigns consecutive offsets. */
void tfs_st_layout(struct st_header *h);
/* The 8-byte length + JSON header padded with spaces to a multiple of 8, malloc'd into
 * *out. Returns its length or -ENOMEM. */
long tfs_st_format(const struct st_header *h, uint8_t **out);
/* safetensors dtype names ("F32") <-> tensorfs dtypes. */
int tfs_st_dtype_parse(const char *s, tfs_dtype *out);
const char *tfs_st_dtype_name(tfs_dtype dt);

#endif
