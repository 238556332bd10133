/* .safetensors headers: parse, check, lay out and write. No I/O.
 * File layout: 8-byte little-endian header length N, N bytes of JSON, then the data. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "dtype.h"
#include "strutil.h"
#include "formats.h"

static const struct { tfs_dtype dt; const char *name; } st_types[] = {
	{ TFS_BOOL, "BOOL" }, { TFS_U8, "U8" }, { TFS_I8, "I8" }, { TFS_U16, "U16" },
	{ TFS_I16, "I16" }, { TFS_U32, "U32" }, { TFS_I32, "I32" }, { TFS_U64, "U64" },
	{ TFS_I64, "I64" }, { TFS_F16, "F16" }, { TFS_BF16, "BF16" }, { TFS_F32, "F32" },
	{ TFS_F64, "F64" }, { TFS_F8E4M3, "F8_E4M3" }, { TFS_F8E5M2, "F8_E5M2" },
};

int tfs_st_dtype_parse(const char *s, tfs_dtype *out)
{
	for (size_t i = 0; i < sizeof(st_types) / sizeof(st_types[0]); i++)
		if (!strcmp(s, st_types[i].name)) {
			*out = st_types[i].dt;
			return 0;
		}
	return -ENOTSUP;
}

const char *tfs_st_dtype_name(tfs_dtype dt)
{
	for (size_t i = 0; i < sizeof(st_types) / sizeof(st_types[0]); i++)
		if (st_types[i].dt == dt)
			return st_types[i].name;
	return NULL;
}

int tfs_st_header_len(const uint8_t first8[8], uint64_t file_size, uint64_t *hlen)
{
	uint64_t n = 0;

	for (int i = 7; i >= 0; i--)
		n = n << 8 | first8[i];
	if (file_size < 8 || n > file_size - 8 || n < 2 || n > ST_MAX_HEADER)
		return -EBADMSG;
	*hlen = n;
	return 0;
}

void tfs_st_free(struct st_header *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->e[i].name);
	free(h->e);
	free(h->metadata);
	memset(h, 0, sizeof(*h));
}

static int by_begin(const void *a, const void *b)
{
	const struct st_entry *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static int get_u64(const cJSON *v, uint64_t *out)
{
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 9007199254740992.0 ||
	    v->valuedouble != (double)(uint64_t)v->valuedouble)
		return -1;
	*out = (uint64_t)v->valuedouble;
	return 0;
}

int tfs_st_parse(const char *json, size_t len, uint64_t data_size, struct st_header *h,
	     char *why, size_t whylen)
{
	cJSON *o = cJSON_ParseWithLength(json, len), *it;
	size_t n = 0;
	int rc = 0;

	memset(h, 0, sizeof(*h));
	if (!cJSON_IsObject(o)) {
		rc = tfs_errf(why, whylen, -EBADMSG, "header is not a JSON object");
		goto out;
	}
	cJSON_ArrayForEach(it, o)
		n++;
	h->e = calloc(n ? n : 1, sizeof(*h->e));
	if (!h->e) {
		rc = -ENOMEM;
		goto out;
	}
	cJSON_ArrayForEach(it, o) {
		struct st_entry *e = &h->e[h->n];
		const cJSON *dt, *sh, *off, *d;
		uint64_t bytes;
		size_t i;

		if (!strcmp(it->string, "__metadata__")) {
			if (h->metadata || !cJSON_IsObject(it)) {
				rc = tfs_errf(why, whylen, -EBADMSG, "bad __metadata__");
				goto out;
			}
			cJSON_ArrayForEach(d, it)
				if (!cJSON_IsString(d)) {
					rc = tfs_errf(why, whylen, -EBADMSG,
						  "__metadata__ values must be strings");
					goto out;
				}
			h->metadata = cJSON_PrintUnformatted(it);
			if (!h->metadata) {
				rc = -ENOMEM;
				goto out;
			}
			continue;
		}
		for (i = 0; i < h->n; i++)
			if (!strcmp(h->e[i].name, it->string)) {
				rc = tfs_errf(why, whylen, -EBADMSG, "tensor '%s' appears twice",
					  it->string);
				goto out;
			}
		if (!cJSON_IsObject(it)) {
			rc = tfs_errf(why, whylen, -EBADMSG, "tensor '%s' is not an object", it->string);
			goto out;
		}
		e->name = strdup(it->string);
		if (!e->name) {
			rc = -ENOMEM;
			goto out;
		}
		h->n++;
		dt = cJSON_GetObjectItemCaseSensitive(it, "dtype");
		sh = cJSON_GetObjectItemCaseSensitive(it, "shape");
		off = cJSON_GetObjectItemCaseSensitive(it, "data_offsets");
		if (!cJSON_IsString(dt) || !cJSON_IsArray(sh) || !cJSON_IsArray(off) ||
		    cJSON_GetArraySize(off) != 2) {
			rc = tfs_errf(why, whylen, -EBADMSG,
				  "tensor '%s' lacks dtype, shape or data_offsets", e->name);
			goto out;
		}
		if (tfs_st_dtype_parse(dt->valuestring, &e->dtype)) {
			rc = tfs_errf(why, whylen, -ENOTSUP, "tensor '%s': unknown dtype '%s'", e->name,
				  dt->valuestring);
			goto out;
		}
		if (cJSON_GetArraySize(sh) > TFS_MAX_DIMS) {
			rc = tfs_errf(why, whylen, -ENOTSUP, "tensor '%s': more than %d dims", e->name,
				  TFS_MAX_DIMS);
			goto out;
		}
		cJSON_ArrayForEach(d, sh)
			if (get_u64(d, &e->shape.dims[e->shape.ndim++])) {
				rc = tfs_errf(why, whylen, -EBADMSG, "tensor '%s': bad shape", e->name);
				goto out;
			}
		if (get_u64(cJSON_GetArrayItem(off, 0), &e->begin) ||
		    get_u64(cJSON_GetArrayItem(off, 1), &e->end) || e->begin > e->end) {
			rc = tfs_errf(why, whylen, -EBADMSG, "tensor '%s': bad data_offsets", e->name);
			goto out;
		}
		if (e->end > data_size) {
			rc = tfs_errf(why, whylen, -EBADMSG,
				  "tensor '%s': data_offsets [%llu,%llu] past the end of the data (%llu bytes)",
				  e->name, (unsigned long long)e->begin, (unsigned long long)e->end,
				  (unsigned long long)data_size);
			goto out;
		}
		if (tfs_shape_bytes(&e->shape, tfs_dtype_size(e->dtype), &bytes) ||
		    bytes != e->end - e->begin) {
			rc = tfs_errf(why, whylen, -EBADMSG,
				  "tensor '%s': data_offsets hold %llu bytes, dtype and shape need %llu",
				  e->name, (unsigned long long)(e->end - e->begin),
				  (unsigned long long)bytes);
			goto out;
		}
	}
	qsort(h->e, h->n, sizeof(*h->e), by_begin);
	for (size_t i = 0; i < h->n; i++) {
		uint64_t prev = i ? h->e[i - 1].end : 0;

		if (h->e[i].begin < prev) {
			rc = tfs_errf(why, whylen, -EBADMSG, "tensors '%s' and '%s' overlap",
				  h->e[i - 1].name, h->e[i].name);
			goto out;
		}
		if (h->e[i].begin > prev) {
			rc = tfs_errf(why, whylen, -EBADMSG, "hole in the data before tensor '%s'",
				  h->e[i].name);
			goto out;
		}
	}
	if ((h->n ? h->e[h->n - 1].end : 0) != data_size)
		rc = tfs_errf(why, whylen, -EBADMSG, "%llu bytes of data after the last tensor",
			  (unsigned long long)(data_size - (h->n ? h->e[h->n - 1].end : 0)));
out:
	cJSON_Delete(o);
	if (rc)
		tfs_st_free(h);
	return rc;
}

/* The safetensors library's order (checked against safetensors 0.8.0 from PyTorch): by its
 * Rust Dtype enum, last first, then by name. That enum lists BOOL, U8, I8, F8_E5M2,
 * F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64, so equal item sizes are not
 * ordered by name alone (I8 before U8 before BOOL). */
static int st_rank(tfs_dtype dt)
{
	static const tfs_dtype order[] = { TFS_BOOL, TFS_U8, TFS_I8, TFS_F8E5M2, TFS_F8E4M3,
		TFS_I16, TFS_U16, TFS_F16, TFS_BF16, TFS_I32, TFS_U32, TFS_F32, TFS_F64,
		TFS_I64, TFS_U64 };

	for (int i = 0; i < (int)(sizeof(order) / sizeof(order[0])); i++)
		if (order[i] == dt)
			return i;
	return -1;
}

static int by_layout(const void *a, const void *b)
{
	const struct st_entry *x = a, *y = b;
	int rx = st_rank(x->dtype), ry = st_rank(y->dtype);

	if (rx != ry)
		return rx > ry ? -1 : 1;
	return strcmp(x->name, y->name);
}

void tfs_st_layout(struct st_header *h)
{
	uint64_t off = 0, bytes;

	qsort(h->e, h->n, sizeof(*h->e), by_layout);
	for (size_t i = 0; i < h->n; i++) {
		if (tfs_shape_bytes(&h->e[i].shape, tfs_dtype_size(h->e[i].dtype), &bytes))
			bytes = 0;
		h->e[i].begin = off;
		h->e[i].end = off += bytes;
	}
}

long tfs_st_format(const struct st_header *h, uint8_t **out)
{
	cJSON *o = cJSON_CreateObject(), *t, *a;
	char *js = NULL, num[32];
	size_t len, padded;
	long rc = -ENOMEM;

	*out = NULL;
	if (!o)
		return -ENOMEM;
	if (h->metadata) {
		cJSON *m = cJSON_Parse(h->metadata);

		if (!m || !cJSON_AddItemToObject(o, "__metadata__", m)) {
			cJSON_Delete(m);
			rc = -EINVAL;
			goto out;
		}
	}
	for (size_t i = 0; i < h->n; i++) {
		const struct st_entry *e = &h->e[i];

		if (!tfs_st_dtype_name(e->dtype)) {
			rc = -ENOTSUP;
			goto out;
		}
		t = cJSON_AddObjectToObject(o, e->name);
		if (!t || !cJSON_AddStringToObject(t, "dtype", tfs_st_dtype_name(e->dtype)))
			goto out;
		a = cJSON_AddArrayToObject(t, "shape");
		if (!a)
			goto out;
		/* Raw numbers: doubles would round dims and offsets past 2^53. */
		for (int d = 0; d < e->shape.ndim; d++) {
			snprintf(num, sizeof(num), "%llu", (unsigned long long)e->shape.dims[d]);
			cJSON_AddItemToArray(a, cJSON_CreateRaw(num));
		}
		a = cJSON_AddArrayToObject(t, "data_offsets");
		if (!a)
			goto out;
		snprintf(num, sizeof(num), "%llu", (unsigned long long)e->begin);
		cJSON_AddItemToArray(a, cJSON_CreateRaw(num));
		snprintf(num, sizeof(num), "%llu", (unsigned long long)e->end);
		cJSON_AddItemToArray(a, cJSON_CreateRaw(num));
	}
	js = cJSON_PrintUnformatted(o);
	if (!js)
		goto out;
	len = strlen(js);
	padded = (len + 7) / 8 * 8;
	*out = malloc(8 + padded);
	if (!*out)
		goto out;
	for (int i = 0; i < 8; i++)
		(*out)[i] = (uint8_t)((uint64_t)padded >> (8 * i));
	memcpy(*out + 8, js, len);
	memset(*out + 8 + len, ' ', padded - len);
	rc = (long)(8 + padded);
out:
	free(js);
	cJSON_Delete(o);
	return rc;
}
