/* NumPy .npy headers: parse and write (format versions 1.0, 2.0 and 3.0). No I/O. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dtype.h"
#include "strutil.h"
#include "formats.h"

static const char npy_magic[6] = { '\x93', 'N', 'U', 'M', 'P', 'Y' };

static const struct { tfs_dtype dt; const char *descr; } npy_types[] = {
	{ TFS_BOOL, "|b1" }, { TFS_U8, "|u1" }, { TFS_I8, "|i1" }, { TFS_U16, "<u2" },
	{ TFS_I16, "<i2" }, { TFS_U32, "<u4" }, { TFS_I32, "<i4" }, { TFS_U64, "<u8" },
	{ TFS_I64, "<i8" }, { TFS_F16, "<f2" }, { TFS_F32, "<f4" }, { TFS_F64, "<f8" },
};

int tfs_npy_header_size(const uint8_t *b, size_t n, uint64_t *hsize)
{
	if (n < 10 || memcmp(b, npy_magic, 6) != 0)
		return -EBADMSG;
	if (b[6] == 1) {
		*hsize = 10 + (uint64_t)(b[8] | b[9] << 8);
		return 0;
	}
	if ((b[6] == 2 || b[6] == 3) && n >= 12) {
		*hsize = 12 + ((uint64_t)b[8] | (uint64_t)b[9] << 8 | (uint64_t)b[10] << 16 |
			       (uint64_t)b[11] << 24);
		return 0;
	}
	return -EBADMSG;
}

struct cur { const char *p, *end; };

static void skip_ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static int eat(struct cur *c, char ch)
{
	skip_ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return 1;
	}
	return 0;
}

/* A Python string literal in ' or " (no escapes: none appear in real headers). */
static int pystr(struct cur *c, char *out, size_t size)
{
	char q;
	size_t n = 0;

	skip_ws(c);
	if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
		return -1;
	q = *c->p++;
	while (c->p < c->end && *c->p != q) {
		if (*c->p == '\\' || n + 1 >= size)
			return -1;
		out[n++] = *c->p++;
	}
	if (c->p >= c->end)
		return -1;
	c->p++;
	out[n] = 0;
	return 0;
}

static int pyshape(struct cur *c, struct tfs_shape *sh)
{
	sh->ndim = 0;
	if (!eat(c, '('))
		return -1;
	for (;;) {
		uint64_t v = 0;
		int digits = 0;

		if (eat(c, ')'))
			return 0;
		skip_ws(c);
		while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
			if (v > (UINT64_MAX - 9) / 10)
				return -1;
			v = v * 10 + (uint64_t)(*c->p++ - '0');
			digits++;
		}
		if (c->p < c->end && *c->p == 'L')      /* Python 2 longs */
			c->p++;
		if (!digits || sh->ndim >= TFS_MAX_DIMS)
			return -1;
		sh->dims[sh->ndim++] = v;
		if (!eat(c, ',')) {
			if (!eat(c, ')'))
				return -1;
			return 0;
		}
	}
}

int tfs_npy_parse(const uint8_t *b, size_t n, struct npy_info *out, char *why, size_t whylen)
{
	uint64_t hsize;
	struct cur c;
	char key[32], descr[32] = "";
	int have_descr = 0, have_shape = 0, have_order = 0, fortran = 0;

	memset(out, 0, sizeof(*out));
	if (tfs_npy_header_size(b, n, &hsize))
		return tfs_errf(why, whylen, -EBADMSG, "not an .npy file (bad magic or version)");
	if (hsize > n)
		return tfs_errf(why, whylen, -EBADMSG, "header truncated");
	c.p = (const char *)b + (b[6] == 1 ? 10 : 12);
	c.end = (const char *)b + hsize;
	if (!eat(&c, '{'))
		return tfs_errf(why, whylen, -EBADMSG, "header is not a dict");
	for (;;) {
		if (eat(&c, '}'))
			break;
		if (pystr(&c, key, sizeof(key)) || !eat(&c, ':'))
			return tfs_errf(why, whylen, -EBADMSG, "bad key in header");
		if (!strcmp(key, "descr")) {
			if (pystr(&c, descr, sizeof(descr)))
				return tfs_errf(why, whylen, -ENOTSUP, "descr is not a simple dtype");
			have_descr = 1;
		} else if (!strcmp(key, "fortran_order")) {
			skip_ws(&c);
			if (c.end - c.p >= 4 && !memcmp(c.p, "True", 4)) {
				fortran = 1;
				c.p += 4;
			} else if (c.end - c.p >= 5 && !memcmp(c.p, "False", 5)) {
				c.p += 5;
			} else {
				return tfs_errf(why, whylen, -EBADMSG, "bad fortran_order");
			}
			have_order = 1;
		} else if (!strcmp(key, "shape")) {
			if (pyshape(&c, &out->shape))
				return tfs_errf(why, whylen, -EBADMSG, "bad shape (or more than %d dims)",
					    TFS_MAX_DIMS);
			have_shape = 1;
		} else {
			return tfs_errf(why, whylen, -EBADMSG, "unknown key '%s' in header", key);
		}
		if (!eat(&c, ',')) {
			if (!eat(&c, '}'))
				return tfs_errf(why, whylen, -EBADMSG, "header dict not closed");
			break;
		}
	}
	skip_ws(&c);
	if (c.p != c.end)
		return tfs_errf(why, whylen, -EBADMSG, "garbage after the header dict");
	if (!have_descr || !have_shape || !have_order)
		return tfs_errf(why, whylen, -EBADMSG, "header lacks descr, fortran_order or shape");
	if (fortran)
		return tfs_errf(why, whylen, -ENOTSUP, "Fortran-order arrays are not supported");
	/* '=' is native order (little-endian here); one-byte types may say '|', '<' or '='. */
	if (descr[0] == '=')
		descr[0] = '<';
	if ((descr[0] == '<' || descr[0] == '=') && descr[2] == '1' && descr[3] == 0)
		descr[0] = '|';
	for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
		if (!strcmp(descr, npy_types[i].descr)) {
			out->dtype = npy_types[i].dt;
			out->data_off = hsize;
			if (tfs_shape_bytes(&out->shape, tfs_dtype_size(out->dtype), &out->bytes))
				return tfs_errf(why, whylen, -EBADMSG, "shape too large");
			return 0;
		}
	return tfs_errf(why, whylen, -ENOTSUP, "dtype '%s' not supported (big-endian or unknown)",
		    descr);
}

long tfs_npy_format(tfs_dtype dt, const struct tfs_shape *sh, uint8_t *buf, size_t size)
{
	const char *descr = NULL;
	char dict[64 + 24 * TFS_MAX_DIMS];
	size_t len, total, pre;
	int n;

	for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
		if (npy_types[i].dt == dt)
			descr = npy_types[i].descr;
	if (!descr)
		return -ENOTSUP;
	n = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (",
		     descr);
	for (int i = 0; i < sh->ndim; i++)
		n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s%llu", i ? ", " : "",
			      (unsigned long long)sh->dims[i]);
	n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s), }", sh->ndim == 1 ? "," : "");
	len = (size_t)n;
	pre = 10;
	total = (pre + len + 1 + 63) / 64 * 64;
	if (total - pre > 65535) {
		pre = 12;
		total = (pre + len + 1 + 63) / 64 * 64;
	}
	if (total > size)
		return -ENOSPC;
	memcpy(buf, npy_magic, 6);
	buf[6] = pre == 10 ? 1 : 2;
	buf[7] = 0;
	buf[8] = (uint8_t)((total - pre) & 0xff);
	buf[9] = (uint8_t)((total - pre) >> 8);
	if (pre == 12) {
		buf[10] = (uint8_t)((total - pre) >> 16);
		buf[11] = (uint8_t)((total - pre) >> 24);
	}
	memcpy(buf + pre, dict, len);
	memset(buf + pre + len, ' ', total - pre - len - 1);
	buf[total - 1] = '\n';
	return (long)total;
}
