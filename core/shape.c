#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dtype.h"
#include "shape.h"
#include "strutil.h"

static void skip_space(const char **p, const char *end)
{
	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
}

int tfs_shape_parse(const char *s, size_t len, struct tfs_shape *out)
{
	struct tfs_shape sh = { 0 };
	const char *p, *end;
	int bracket = 0;

	tfs_trim(&s, &len);
	if (len == 0)
		return -EINVAL;
	p = s;
	end = s + len;
	if (*p == '[') {
		if (end[-1] != ']')
			return -EINVAL;
		bracket = 1;
		p++;
		end--;
	}
	skip_space(&p, end);
	if (p == end)
		return bracket ? (*out = sh, 0) : -EINVAL;
	for (;;) {
		const char *start;

		skip_space(&p, end);
		start = p;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p == start)
			return -EINVAL;         /* "-1", "1.5" ends here, "a" too */
		if (sh.ndim == TFS_MAX_DIMS)
			return -E2BIG;
		if (tfs_parse_u64(start, (size_t)(p - start), &sh.dims[sh.ndim]))
			return -EINVAL;
		sh.ndim++;
		skip_space(&p, end);
		if (p == end)
			break;
		if (*p != ',')
			return -EINVAL;
		p++;
	}
	*out = sh;
	return 0;
}

int tfs_shape_format(const struct tfs_shape *sh, char *buf, size_t size)
{
	size_t n = 0;
	int w;

	w = snprintf(buf, size, "[");
	if (w < 0 || (size_t)w >= size)
		return -ENAMETOOLONG;
	n = (size_t)w;
	for (int i = 0; i < sh->ndim; i++) {
		w = snprintf(buf + n, size - n, "%s%llu", i ? "," : "",
			     (unsigned long long)sh->dims[i]);
		if (w < 0 || (size_t)w >= size - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	}
	w = snprintf(buf + n, size - n, "]");
	if (w < 0 || (size_t)w >= size - n)
		return -ENAMETOOLONG;
	return (int)(n + (size_t)w);
}

int tfs_shape_bytes(const struct tfs_shape *sh, size_t itemsize, uint64_t *bytes)
{
	uint64_t n = itemsize;
	int zero = 0;

	/* Zero dims make the product 0, but the other dims must still be sane: a shape like
	 * [0,2^64-1,2^64-1] is refused, so every accepted shape formats in a few dozen bytes. */
	for (int i = 0; i < sh->ndim; i++) {
		if (sh->dims[i] == 0) {
			zero = 1;
			continue;
		}
		if (n > (uint64_t)INT64_MAX / sh->dims[i])
			return -EOVERFLOW;
		n *= sh->dims[i];
	}
	*bytes = zero ? 0 : n;
	return 0;
}

void tfs_shape_1d(struct tfs_shape *sh, uint64_t n)
{
	memset(sh, 0, sizeof(*sh));
	sh->ndim = 1;
	sh->dims[0] = n;
}

int tfs_shape_equal(const struct tfs_shape *a, const struct tfs_shape *b)
{
	return a->ndim == b->ndim &&
	       memcmp(a->dims, b->dims, sizeof(a->dims[0]) * (size_t)a->ndim) == 0;
}

int tfs_shape_parse_typed(const char *s, size_t len, tfs_dtype *dt, struct tfs_shape *sh)
{
	const char *p, *end;
	struct tfs_shape out;
	tfs_dtype t;
	int rc;

	tfs_trim(&s, &len);
	if (len == 0)
		return -EINVAL;
	if (*s == '[' || (*s >= '0' && *s <= '9'))
		return (rc = tfs_shape_parse(s, len, sh)) ? rc : 1;
	end = s + len;
	for (p = s; p < end && *p != ' ' && *p != '\t'; p++)
		;
	if (p == end || tfs_dtype_parse(s, (size_t)(p - s), &t))
		return -EINVAL;
	if ((rc = tfs_shape_parse(p, (size_t)(end - p), &out)))
		return rc;
	*dt = t;
	*sh = out;
	return 0;
}
