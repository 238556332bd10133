#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "dtype.h"
#include "meta.h"
#include "strutil.h"

static void add_field(struct tfs_meta_fields *f, const char *name, const void *val, size_t len)
{
	int i = f->n++;

	memcpy(f->buf[i], val, len);
	f->field[i] = name;
	f->value[i] = f->buf[i];
	f->len[i] = len;
}

static void add_fmt(struct tfs_meta_fields *f, const char *name, const char *fmt,
		    unsigned long long v, int is_signed)
{
	char tmp[32];
	int n = is_signed ? snprintf(tmp, sizeof(tmp), "%lld", (long long)v)
			  : snprintf(tmp, sizeof(tmp), fmt, v);

	add_field(f, name, tmp, (size_t)n);
}

void tfs_meta_to_fields(const struct tfs_meta *m, struct tfs_meta_fields *f)
{
	char shape[128];
	const char *dt = tfs_dtype_name(m->dtype);
	int n = tfs_shape_format(&m->shape, shape, sizeof(shape));

	f->n = 0;
	add_field(f, "dtype", dt, strlen(dt));
	/* A 16-dim shape of 20-digit dims is longer than the buffer: format() then fails
	 * and such shapes are refused before they get here (tfs_meta_shape_fits). */
	add_field(f, "shape", shape, n > 0 ? (size_t)n : 0);
	add_fmt(f, "bytes", "%llu", m->bytes, 0);
	add_fmt(f, "device", "%llu", (unsigned long long)(long long)m->device, 1);
	add_fmt(f, "ctime", "%llu", (unsigned long long)m->ctime, 1);
	add_fmt(f, "mtime", "%llu", (unsigned long long)m->mtime, 1);
	add_fmt(f, "ctime_ns", "%llu", (unsigned long long)m->ctime_ns, 1);
	add_field(f, "node", m->node, strlen(m->node));
	add_field(f, "ipc_handle", m->ipc_handle, m->has_handle ? TFS_IPC_HANDLE_SIZE : 0);
	add_fmt(f, "ipc_offset", "%llu", m->ipc_offset, 0);
	add_fmt(f, "refcount", "%llu", (unsigned long long)m->refcount, 1);
	add_field(f, "state", m->has_handle || m->bytes == 0 ? "ready" : "empty", 5);
	add_field(f, "backend", m->backend, strlen(m->backend));
	add_fmt(f, "mode", "%llo", m->mode, 0);
	add_fmt(f, "uid", "%llu", m->uid, 0);
	add_fmt(f, "gid", "%llu", m->gid, 0);
}

static int bad(char *why, size_t whylen, const char *field, const char *what)
{
	if (why)
		snprintf(why, whylen, "field '%s': %s", field, what);
	return -EBADMSG;
}

static int get_i64(const char *v, size_t len, int64_t lo, int64_t hi, int64_t *out)
{
	int64_t x;

	if (tfs_parse_i64(v, len, &x) || x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

int tfs_meta_from_fields(struct tfs_meta *m, size_t n, const char *const *field,
			 const size_t *flen, const char *const *value, const size_t *vlen,
			 char *why, size_t whylen)
{
	enum { F_DTYPE = 1, F_SHAPE = 2, F_BYTES = 4, F_NODE = 8 };
	unsigned seen = 0;
	uint64_t expect;
	int64_t x;

	memset(m, 0, sizeof(*m));
	m->mode = 0644;
	for (size_t i = 0; i < n; i++) {
		const char *f = field[i], *v = value[i];
		size_t fl = flen[i], vl = vlen[i];
#define IS(name) tfs_streq_n(name, f, fl)
		if (IS("dtype")) {
			if (tfs_dtype_parse(v, vl, &m->dtype))
				return bad(why, whylen, "dtype", "unknown dtype");
			seen |= F_DTYPE;
		} else if (IS("shape")) {
			if (tfs_shape_parse(v, vl, &m->shape))
				return bad(why, whylen, "shape", "not a shape");
			seen |= F_SHAPE;
		} else if (IS("bytes")) {
			if (get_i64(v, vl, 0, INT64_MAX, &x))
				return bad(why, whylen, "bytes", "not a byte count");
			m->bytes = (uint64_t)x;
			seen |= F_BYTES;
		} else if (IS("device")) {
			if (get_i64(v, vl, 0, 1 << 20, &x))
				return bad(why, whylen, "device", "not a device ordinal");
			m->device = (int)x;
		} else if (IS("ctime") || IS("mtime")) {
			if (get_i64(v, vl, INT64_MIN, INT64_MAX, &x))
				return bad(why, whylen, IS("ctime") ? "ctime" : "mtime", "not a time");
			*(IS("ctime") ? &m->ctime : &m->mtime) = x;
		} else if (IS("ctime_ns")) {
			if (get_i64(v, vl, 0, INT64_MAX, &x))
				return bad(why, whylen, "ctime_ns", "not a time");
			m->ctime_ns = x;
		} else if (IS("node")) {
			if (vl == 0 || vl >= TFS_NODE_MAX || memchr(v, '\0', vl))
				return bad(why, whylen, "node", "empty, too long or binary");
			memcpy(m->node, v, vl);
			m->node[vl] = '\0';
			seen |= F_NODE;
		} else if (IS("ipc_handle")) {
			if (vl != 0 && vl != TFS_IPC_HANDLE_SIZE)
				return bad(why, whylen, "ipc_handle", "not 64 bytes");
			m->has_handle = vl != 0;
			memcpy(m->ipc_handle, v, vl);
		} else if (IS("ipc_offset")) {
			if (get_i64(v, vl, 0, INT64_MAX, &x))
				return bad(why, whylen, "ipc_offset", "not an offset");
			m->ipc_offset = (uint64_t)x;
		} else if (IS("refcount")) {
			if (get_i64(v, vl, 0, INT64_MAX, &x))
				return bad(why, whylen, "refcount", "not a count");
			m->refcount = x;
		} else if (IS("backend")) {
			if (!(tfs_streq_n("host", v, vl) || tfs_streq_n("cuda", v, vl)))
				return bad(why, whylen, "backend", "neither host nor cuda");
			memcpy(m->backend, v, vl);
			m->backend[vl] = '\0';
		} else if (IS("mode")) {
			uint64_t mode = 0;
			for (size_t k = 0; k < vl; k++) {
				if (v[k] < '0' || v[k] > '7' || k > 5)
					return bad(why, whylen, "mode", "not octal permissions");
				mode = mode * 8 + (uint64_t)(v[k] - '0');
			}
			if (vl == 0 || mode > 07777)
				return bad(why, whylen, "mode", "not octal permissions");
			m->mode = (uint32_t)mode;
		} else if (IS("uid") || IS("gid")) {
			if (get_i64(v, vl, 0, UINT32_MAX - 1, &x))
				return bad(why, whylen, IS("uid") ? "uid" : "gid", "not an id");
			*(IS("uid") ? &m->uid : &m->gid) = (uint32_t)x;
		}
#undef IS
	}
	if ((seen & (F_DTYPE | F_SHAPE | F_BYTES | F_NODE)) != (F_DTYPE | F_SHAPE | F_BYTES | F_NODE))
		return bad(why, whylen, (seen & F_DTYPE) == 0 ? "dtype" : (seen & F_SHAPE) == 0 ?
			   "shape" : (seen & F_BYTES) == 0 ? "bytes" : "node", "missing");
	if (tfs_shape_bytes(&m->shape, tfs_dtype_size(m->dtype), &expect) || expect != m->bytes)
		return bad(why, whylen, "bytes", "does not match dtype and shape");
	if (m->bytes > 0 && !m->has_handle)
		return bad(why, whylen, "ipc_handle", "missing for a tensor with bytes");
	if (m->backend[0] == '\0')
		strcpy(m->backend, "host");
	return 0;
}

char *tfs_meta_to_json(const struct tfs_meta *m, const char *name)
{
	char shape[512], hex[2 * TFS_IPC_HANDLE_SIZE + 1] = "", *out = NULL;
	cJSON *o = cJSON_CreateObject(), *dims;

	if (!o)
		return NULL;
	if (name)
		cJSON_AddStringToObject(o, "name", name);
	cJSON_AddStringToObject(o, "dtype", tfs_dtype_name(m->dtype));
	dims = cJSON_AddArrayToObject(o, "shape");
	for (int i = 0; dims && i < m->shape.ndim; i++)
		cJSON_AddItemToArray(dims, cJSON_CreateNumber((double)m->shape.dims[i]));
	/* Doubles lose integers past 2^53: the exact shape also travels as text. */
	if (tfs_shape_format(&m->shape, shape, sizeof(shape)) > 0)
		cJSON_AddStringToObject(o, "shape_text", shape);
	snprintf(shape, sizeof(shape), "%llu", (unsigned long long)m->bytes);
	cJSON_AddRawToObject(o, "bytes", shape);
	cJSON_AddNumberToObject(o, "device", m->device);
	cJSON_AddStringToObject(o, "node", m->node);
	cJSON_AddStringToObject(o, "backend", m->backend);
	if (m->has_handle)
		tfs_hex_encode(m->ipc_handle, TFS_IPC_HANDLE_SIZE, hex);
	cJSON_AddStringToObject(o, "ipc_handle", hex);
	snprintf(shape, sizeof(shape), "%llu", (unsigned long long)m->ipc_offset);
	cJSON_AddRawToObject(o, "ipc_offset", shape);
	cJSON_AddNumberToObject(o, "refcount", (double)m->refcount);
	cJSON_AddNumberToObject(o, "ctime", (double)m->ctime);
	cJSON_AddNumberToObject(o, "mtime", (double)m->mtime);
	snprintf(shape, sizeof(shape), "\"%04o\"", m->mode & 07777);
	cJSON_AddRawToObject(o, "mode", shape);
	cJSON_AddNumberToObject(o, "uid", m->uid);
	cJSON_AddNumberToObject(o, "gid", m->gid);
	out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return out;
}

static int json_u64(const cJSON *o, const char *key, uint64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 9.2e18)
		return -1;
	*out = (uint64_t)v->valuedouble;
	return 0;
}

int tfs_meta_from_json(const char *s, size_t len, struct tfs_meta *m)
{
	cJSON *o = cJSON_ParseWithLength(s, len);
	const cJSON *v;
	uint64_t x;
	int rc = -EBADMSG;

	memset(m, 0, sizeof(*m));
	if (!cJSON_IsObject(o))
		goto out;
	v = cJSON_GetObjectItemCaseSensitive(o, "dtype");
	if (!cJSON_IsString(v) || tfs_dtype_parse(v->valuestring, strlen(v->valuestring), &m->dtype))
		goto out;
	v = cJSON_GetObjectItemCaseSensitive(o, "shape_text");
	if (!cJSON_IsString(v) || tfs_shape_parse(v->valuestring, strlen(v->valuestring), &m->shape))
		goto out;
	if (json_u64(o, "bytes", &m->bytes) || json_u64(o, "ipc_offset", &m->ipc_offset))
		goto out;
	if (json_u64(o, "device", &x) || x > (1 << 20))
		goto out;
	m->device = (int)x;
	if (json_u64(o, "refcount", &x))
		goto out;
	m->refcount = (int64_t)x;
	v = cJSON_GetObjectItemCaseSensitive(o, "ctime");
	m->ctime = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(o, "mtime");
	m->mtime = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(o, "node");
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= TFS_NODE_MAX)
		goto out;
	strcpy(m->node, v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(o, "backend");
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= sizeof(m->backend))
		goto out;
	strcpy(m->backend, v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(o, "ipc_handle");
	if (!cJSON_IsString(v))
		goto out;
	if (v->valuestring[0]) {
		if (tfs_hex_decode(v->valuestring, strlen(v->valuestring), m->ipc_handle,
				   TFS_IPC_HANDLE_SIZE))
			goto out;
		m->has_handle = 1;
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "mode");
	if (cJSON_IsString(v))
		m->mode = (uint32_t)strtoul(v->valuestring, NULL, 8) & 07777;
	if (!json_u64(o, "uid", &x))
		m->uid = (uint32_t)x;
	if (!json_u64(o, "gid", &x))
		m->gid = (uint32_t)x;
	rc = 0;
	if (tfs_shape_bytes(&m->shape, tfs_dtype_size(m->dtype), &x) || x != m->bytes)
		rc = -EBADMSG;
out:
	cJSON_Delete(o);
	return rc;
}

static const struct { int err; const char *name; } errnames[] = {
	{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EIO, "EIO" }, { ENOMEM, "ENOMEM" },
	{ EACCES, "EACCES" }, { EBUSY, "EBUSY" }, { EEXIST, "EEXIST" }, { ENOTDIR, "ENOTDIR" },
	{ EISDIR, "EISDIR" }, { EINVAL, "EINVAL" }, { ENOSPC, "ENOSPC" }, { ERANGE, "ERANGE" },
	{ ENAMETOOLONG, "ENAMETOOLONG" }, { ENOTEMPTY, "ENOTEMPTY" }, { ENODATA, "ENODATA" },
	{ EOVERFLOW, "EOVERFLOW" }, { EREMOTE, "EREMOTE" }, { EBADMSG, "EBADMSG" },
	{ E2BIG, "E2BIG" }, { ENOTSUP, "ENOTSUP" }, { ETIMEDOUT, "ETIMEDOUT" },
	{ ECONNREFUSED, "ECONNREFUSED" }, { EPROTO, "EPROTO" }, { ESRCH, "ESRCH" },
	{ ENOTCONN, "ENOTCONN" }, { EAGAIN, "EAGAIN" }, { ENODEV, "ENODEV" },
};

const char *tfs_errno_name(int err)
{
	static __thread char buf[16];

	if (err < 0)
		err = -err;
	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].err == err)
			return errnames[i].name;
	snprintf(buf, sizeof(buf), "E%d", err);
	return buf;
}

int tfs_errno_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (strcmp(errnames[i].name, name) == 0)
			return errnames[i].err;
	return EIO;
}

int tfs_name_check(const char *name)
{
	size_t total = strlen(name), comp = 0;
	const char *c = name;

	if (total == 0 || name[0] == '/' || name[total - 1] == '/')
		return -EINVAL;
	if (total > 4095)
		return -ENAMETOOLONG;
	for (const char *p = name;; p++) {
		if (*p == '/' || *p == '\0') {
			comp = (size_t)(p - c);
			if (comp == 0 || (comp == 1 && c[0] == '.') ||
			    (comp == 2 && c[0] == '.' && c[1] == '.'))
				return -EINVAL;
			if (comp > 255)
				return -ENAMETOOLONG;
			if (*p == '\0')
				return 0;
			c = p + 1;
		}
	}
}
