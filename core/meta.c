#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "dtype.h"
#include "meta.h"
#include "strutil.h"
#include "tier.h"

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
	 * and such shapes are refused before they get here (tfs_shape_bytes: their product
	 * overflows). */
	add_field(f, "shape", shape, n > 0 ? (size_t)n : 0);
	add_fmt(f, "bytes", "%llu", m->bytes, 0);
	{
		char dev[TFS_TIER_NAME_MAX];

		tfs_tier_name(m->device, dev, sizeof(dev));
		add_field(f, "device", dev, strlen(dev));
	}
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
	add_fmt(f, "ino", "%llu", (unsigned long long)m->ino, 0);
	add_fmt(f, "dir", "%llu", (unsigned long long)m->dir, 0);
	add_fmt(f, "sum", "%llu", (unsigned long long)m->sum, 0);
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
			if (tfs_tier_parse(v, vl, &m->device))
				return bad(why, whylen, "device", "not cpu or a device ordinal");
		} else if (IS("sum")) {
			uint64_t s;

			if (tfs_parse_u64(v, vl, &s))
				return bad(why, whylen, "sum", "not a checksum");
			m->sum = s;
		} else if (IS("ctime") || IS("mtime")) {
			if (get_i64(v, vl, INT64_MIN, INT64_MAX, &x))
				return bad(why, whylen, IS("ctime") ? "ctime" : "mtime", "not a time");
			*(IS("ctime") ? &m->ctime : &m->mtime) = x;
		} else if (IS("ino")) {
			if (get_i64(v, vl, 0, INT64_MAX, &x))
				return bad(why, whylen, "ino", "not an inode number");
			m->ino = (uint64_t)x;
		} else if (IS("dir")) {
			if (get_i64(v, vl, 0, INT64_MAX, &x))
				return bad(why, whylen, "dir", "not an inode number");
			m->dir = (uint64_t)x;
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

/* Metadata JSON written by hand: the queue worker answers nearly every command with it
 * (tfs_reply_ok), and printing it with cJSON (a printf and a strtod per number) was most
 * of the worker's time for a get or a delete. Strings are escaped as cJSON escapes them;
 * integers are exact. */
struct jbuf {
	char *s;
	size_t len, cap;
	int oom;
};

static void jb_put(struct jbuf *b, const char *s, size_t n)
{
	char *p;

	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		p = realloc(b->s, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void jb_puts(struct jbuf *b, const char *s)
{
	jb_put(b, s, strlen(s));
}

static void jb_u64(struct jbuf *b, uint64_t v)
{
	char t[24];
	size_t i = sizeof(t);

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	jb_put(b, t + i, sizeof(t) - i);
}

static void jb_i64(struct jbuf *b, int64_t v)
{
	if (v < 0) {
		jb_put(b, "-", 1);
		jb_u64(b, -(uint64_t)v);
	} else {
		jb_u64(b, (uint64_t)v);
	}
}

/* A JSON string, escaped as cJSON escapes it. */
static void jb_str(struct jbuf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	char e[8];

	jb_put(b, "\"", 1);
	while (*s) {
		size_t n = 0;
		while (s[n] && (unsigned char)s[n] >= 0x20 && s[n] != '"' && s[n] != '\\')
			n++;
		jb_put(b, s, n);
		s += n;
		if (!*s)
			break;
		switch (*s) {
		case '"': jb_put(b, "\\\"", 2); break;
		case '\\': jb_put(b, "\\\\", 2); break;
		case '\b': jb_put(b, "\\b", 2); break;
		case '\f': jb_put(b, "\\f", 2); break;
		case '\n': jb_put(b, "\\n", 2); break;
		case '\r': jb_put(b, "\\r", 2); break;
		case '\t': jb_put(b, "\\t", 2); break;
		default:
			memcpy(e, "\\u00", 4);
			e[4] = hex[(unsigned char)*s >> 4];
			e[5] = hex[*s & 15];
			jb_put(b, e, 6);
		}
		s++;
	}
	jb_put(b, "\"", 1);
}

/* "key": with the comma before it, but right after the opening brace */
static void jb_key(struct jbuf *b, const char *key)
{
	if (!b->oom && b->s[b->len - 1] != '{')
		jb_put(b, ",", 1);
	jb_put(b, "\"", 1);
	jb_puts(b, key);
	jb_put(b, "\":", 2);
}

char *tfs_meta_json(const struct tfs_meta *m, const char *name, const char *id)
{
	struct jbuf b = { NULL, 0, 0, 0 };
	char text[512], hex[2 * TFS_IPC_HANDLE_SIZE + 1] = "";
	unsigned mode = m->mode & 07777;

	b.s = malloc(512);
	if (!b.s)
		return NULL;
	b.cap = 512;
	jb_put(&b, "{", 1);
	if (id) {
		jb_key(&b, "id");
		jb_str(&b, id);
		jb_key(&b, "ok");
		jb_puts(&b, "true");
	}
	if (name) {
		jb_key(&b, "name");
		jb_str(&b, name);
	}
	jb_key(&b, "dtype");
	jb_str(&b, tfs_dtype_name(m->dtype));
	jb_key(&b, "shape");
	jb_put(&b, "[", 1);
	for (int i = 0; i < m->shape.ndim; i++) {
		if (i)
			jb_put(&b, ",", 1);
		if (m->shape.dims[i] <= (1ULL << 53)) {
			jb_u64(&b, m->shape.dims[i]);
		} else {
			/* What a JSON number (a double) holds: shape_text has the exact value. */
			snprintf(text, sizeof(text), "%1.17g", (double)m->shape.dims[i]);
			jb_puts(&b, text);
		}
	}
	jb_put(&b, "]", 1);
	if (tfs_shape_format(&m->shape, text, sizeof(text)) > 0) {
		jb_key(&b, "shape_text");
		jb_str(&b, text);
	}
	jb_key(&b, "bytes");
	jb_u64(&b, m->bytes);
	jb_key(&b, "device");
	if (m->device == TFS_DEVICE_CPU)
		jb_str(&b, "cpu");
	else
		jb_i64(&b, m->device);
	jb_key(&b, "node");
	jb_str(&b, m->node);
	jb_key(&b, "backend");
	jb_str(&b, m->backend);
	if (m->has_handle)
		tfs_hex_encode(m->ipc_handle, TFS_IPC_HANDLE_SIZE, hex);
	jb_key(&b, "ipc_handle");
	jb_str(&b, hex);
	jb_key(&b, "ipc_offset");
	jb_u64(&b, m->ipc_offset);
	jb_key(&b, "refcount");
	jb_i64(&b, m->refcount);
	jb_key(&b, "ctime");
	jb_i64(&b, m->ctime);
	jb_key(&b, "mtime");
	jb_i64(&b, m->mtime);
	jb_key(&b, "mode");
	text[0] = '"';
	for (int i = 0; i < 4; i++)
		text[1 + i] = (char)('0' + ((mode >> (9 - 3 * i)) & 7));
	text[5] = '"';
	jb_put(&b, text, 6);
	jb_key(&b, "uid");
	jb_u64(&b, m->uid);
	jb_key(&b, "gid");
	jb_u64(&b, m->gid);
	if (m->ino) {
		/* A string: inode numbers take 63 bits, and JSON parsers that read numbers
		 * as doubles (cJSON, JavaScript) keep 53. */
		snprintf(text, sizeof(text), "%llu", (unsigned long long)m->ino);
		jb_key(&b, "ino");
		jb_str(&b, text);
	}
	if (m->remote) {
		jb_key(&b, "remote");
		jb_puts(&b, "true");
	}
	if (m->ctime_ns > 0) {
		/* A string for the same reason: nanoseconds since the epoch take 61 bits. */
		snprintf(text, sizeof(text), "%lld", (long long)m->ctime_ns);
		jb_key(&b, "ctime_ns");
		jb_str(&b, text);
	}
	if (m->hsock[0]) {
		jb_key(&b, "handle_socket");
		jb_str(&b, m->hsock);
	}
	jb_put(&b, "}", 1);
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

char *tfs_meta_to_json(const struct tfs_meta *m, const char *name)
{
	return tfs_meta_json(m, name, NULL);
}

static int json_u64(const cJSON *o, const char *key, uint64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 9.2e18)
		return -1;
	*out = (uint64_t)v->valuedouble;
	return 0;
}

/* 1 to 19 decimal digits to a number under 2^63; 0 for anything else. */
static uint64_t parse_digits(const char *s)
{
	size_t n = strlen(s);
	uint64_t x;

	return n <= 19 && tfs_parse_u64(s, n, &x) == 0 && x <= INT64_MAX ? x : 0;
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
	v = cJSON_GetObjectItemCaseSensitive(o, "device");
	if (cJSON_IsString(v)) {
		if (tfs_tier_parse(v->valuestring, strlen(v->valuestring), &m->device))
			goto out;
	} else {
		if (json_u64(o, "device", &x) || x > (1 << 20))
			goto out;
		m->device = (int)x;
	}
	if (json_u64(o, "refcount", &x))
		goto out;
	m->refcount = (int64_t)x;
	m->remote = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "remote"));
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
	/* Only ever compared with a file's st_ino and st_ctim (tfs_open): anything but
	 * digits is 0, which matches no file. */
	v = cJSON_GetObjectItemCaseSensitive(o, "ino");
	if (cJSON_IsString(v))
		m->ino = parse_digits(v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(o, "ctime_ns");
	if (cJSON_IsString(v))
		m->ctime_ns = (int64_t)parse_digits(v->valuestring);
	/* Where a client connects to for the memory: an absolute socket path or nothing. */
	v = cJSON_GetObjectItemCaseSensitive(o, "handle_socket");
	if (v) {
		if (!cJSON_IsString(v) || v->valuestring[0] != '/' ||
		    strlen(v->valuestring) >= sizeof(m->hsock))
			goto out;
		strcpy(m->hsock, v->valuestring);
	}
	rc = 0;
	if (tfs_shape_bytes(&m->shape, tfs_dtype_size(m->dtype), &x) || x != m->bytes)
		rc = -EBADMSG;
out:
	cJSON_Delete(o);
	return rc;
}

int tfs_meta_json_name(const char *s, size_t len, char *out, size_t size)
{
	cJSON *o = cJSON_ParseWithLength(s, len);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "name");
	int rc = -EBADMSG;

	if (!cJSON_IsObject(o))
		goto out;
	if (!v) {
		rc = -ENODATA;
		goto out;
	}
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= size || tfs_name_check(v->valuestring))
		goto out;
	strcpy(out, v->valuestring);
	rc = 0;
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
	{ EHOSTDOWN, "EHOSTDOWN" }, { EDQUOT, "EDQUOT" }, { EMLINK, "EMLINK" },
	{ EMSGSIZE, "EMSGSIZE" },
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
	return tfs_name_check_len(name, 4095);
}

int tfs_name_check_len(const char *name, size_t max)
{
	size_t total = strlen(name), comp = 0;
	const char *c = name;

	if (total == 0 || name[0] == '/' || name[total - 1] == '/')
		return -EINVAL;
	if (total > max)
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
