/* The batch create request's bytes (mkbatch.h): built by the library, parsed by the daemon.
 * No I/O. */
#include <errno.h>
#include <string.h>

#include "mkbatch.h"

#define HEAD 4                  /* name length (2), dtype (1), dims (1) */

void tfs_mk_init(struct tfs_mk_req *q, uint32_t flags, int32_t device, uint32_t mode,
		 size_t *used)
{
	memset(q, 0, sizeof(*q));
	q->flags = flags;
	q->device = device;
	q->mode = mode;
	*used = 0;
}

static int name_ok(const char *name, size_t len)
{
	if (len == 0 || len > TFS_MK_NAME_MAX || memchr(name, '/', len) || memchr(name, 0, len))
		return 0;
	return !(len == 1 && name[0] == '.') && !(len == 2 && name[0] == '.' && name[1] == '.');
}

int tfs_mk_add(struct tfs_mk_req *q, size_t *used, const char *name, size_t len,
	       tfs_dtype dt, const struct tfs_shape *sh)
{
	uint16_t nlen = (uint16_t)len;
	size_t need;
	uint8_t *p;

	if (!name_ok(name, len) || (unsigned)dt >= TFS_DTYPE_COUNT || sh->ndim < 0 ||
	    sh->ndim > TFS_MAX_DIMS)
		return -EINVAL;
	need = HEAD + (size_t)sh->ndim * 8 + len;
	if (need > TFS_MK_DATA - *used || q->count >= TFS_MK_COUNT_MAX)
		return -ENOSPC;
	p = q->data + *used;
	memcpy(p, &nlen, 2);
	p[2] = (uint8_t)dt;
	p[3] = (uint8_t)sh->ndim;
	memcpy(p + HEAD, sh->dims, (size_t)sh->ndim * 8);
	memcpy(p + HEAD + (size_t)sh->ndim * 8, name, len);
	*used += need;
	q->count++;
	return 0;
}

int tfs_mk_next(const uint8_t *data, size_t used, size_t *off, struct tfs_mk_entry *e)
{
	size_t at = *off, dims;
	uint16_t nlen;

	if (at > used || used - at < HEAD)
		return -EINVAL;
	memcpy(&nlen, data + at, 2);
	if (data[at + 2] >= TFS_DTYPE_COUNT || data[at + 3] > TFS_MAX_DIMS)
		return -EINVAL;
	dims = data[at + 3];
	if (used - at - HEAD < dims * 8 || used - at - HEAD - dims * 8 < nlen)
		return -EINVAL;
	e->dtype = (tfs_dtype)data[at + 2];
	e->shape.ndim = (int)dims;
	memcpy(e->shape.dims, data + at + HEAD, dims * 8);
	e->name = (const char *)data + at + HEAD + dims * 8;
	e->len = nlen;
	if (!name_ok(e->name, e->len))
		return -EINVAL;
	*off = at + HEAD + dims * 8 + nlen;
	return 0;
}

int tfs_mk_check(const struct tfs_mk_req *q, size_t size, size_t *used)
{
	struct tfs_mk_entry e;
	size_t off = 0;

	if (size != sizeof(*q) || (q->flags & ~(TFS_MK_DEVICE | TFS_MK_SELF)) || q->count == 0 ||
	    q->count > TFS_MK_COUNT_MAX)
		return -EINVAL;
	for (uint32_t i = 0; i < q->count; i++)
		if (tfs_mk_next(q->data, TFS_MK_DATA, &off, &e))
			return -EINVAL;
	for (size_t i = off; i < TFS_MK_DATA; i++)
		if (q->data[i])
			return -EINVAL;
	*used = off;
	return 0;
}
