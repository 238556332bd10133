/* Hugging Face model directories: file classes and the safetensors index (model_dir.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "model_dir.h"

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && !strcmp(s + n - k, suffix);
}

int tfs_model_plain_name(const char *name)
{
	return *name && *name != '.' && !strchr(name, '/') && strlen(name) <= 255;
}

int tfs_model_small_name(const char *name)
{
	return tfs_model_plain_name(name) &&
	       (ends_with(name, ".json") || ends_with(name, ".model") ||
		ends_with(name, ".txt") || ends_with(name, ".jinja"));
}

static int bad(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

void tfs_model_index_free(struct tfs_model_index *idx)
{
	for (size_t i = 0; i < idx->n; i++)
		free(idx->key[i]);
	for (size_t i = 0; i < idx->nshards; i++)
		free(idx->shards[i]);
	free(idx->key);
	free(idx->shard);
	free(idx->shards);
	memset(idx, 0, sizeof(*idx));
}

struct pair { char *key, *shard; };

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct pair *)a)->key, ((const struct pair *)b)->key);
}

int tfs_model_index_parse(const char *json, size_t len, struct tfs_model_index *idx,
			  char *why, size_t whylen)
{
	cJSON *root = cJSON_ParseWithLength(json, len), *wm, *e;
	struct pair *pairs = NULL;
	size_t n = 0, k = 0;
	int rc = -ENOMEM;

	memset(idx, 0, sizeof(*idx));
	if (!root || !cJSON_IsObject(root)) {
		rc = bad(why, whylen, "not a JSON object");
		goto out;
	}
	wm = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
	if (!cJSON_IsObject(wm)) {
		rc = bad(why, whylen, "no \"weight_map\" object");
		goto out;
	}
	cJSON_ArrayForEach(e, wm)
		n++;
	pairs = calloc(n ? n : 1, sizeof(*pairs));
	idx->key = calloc(n ? n : 1, sizeof(*idx->key));
	idx->shard = calloc(n ? n : 1, sizeof(*idx->shard));
	idx->shards = calloc(n ? n : 1, sizeof(*idx->shards));
	if (!pairs || !idx->key || !idx->shard || !idx->shards)
		goto out;
	cJSON_ArrayForEach(e, wm) {
		const char *s = cJSON_GetStringValue(e);
		size_t j;

		if (!s || !e->string) {
			rc = bad(why, whylen, "weight_map[\"%.200s\"] is not a string",
				 e->string ? e->string : "");
			goto out;
		}
		if (!tfs_model_plain_name(s)) {
			rc = bad(why, whylen, "weight_map[\"%.200s\"]: shard \"%.200s\" is not a "
				 "file name of the directory", e->string, s);
			goto out;
		}
		for (j = 0; j < idx->nshards; j++)
			if (!strcmp(idx->shards[j], s))
				break;
		if (j == idx->nshards && !(idx->shards[idx->nshards++] = strdup(s)))
			goto out;
		pairs[k].shard = idx->shards[j];
		if (!(pairs[k].key = strdup(e->string)))
			goto out;
		k++;
	}
	qsort(pairs, k, sizeof(*pairs), by_key);
	for (size_t i = 0; i < k; i++) {
		if (i && !strcmp(pairs[i].key, pairs[i - 1].key)) {
			rc = bad(why, whylen, "weight_map names \"%.200s\" twice", pairs[i].key);
			goto out;
		}
	}
	for (size_t i = 0; i < k; i++) {
		idx->key[i] = pairs[i].key;
		idx->shard[i] = pairs[i].shard;
		pairs[i].key = NULL;
	}
	idx->n = k;
	rc = 0;
out:
	for (size_t i = 0; pairs && i < k; i++)
		free(pairs[i].key);
	free(pairs);
	cJSON_Delete(root);
	if (rc)
		tfs_model_index_free(idx);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

const char *tfs_model_index_find(const struct tfs_model_index *idx, const char *key)
{
	char *const *p;

	if (!idx->n)
		return NULL;
	p = bsearch(&key, idx->key, idx->n, sizeof(*idx->key), cmp_str);
	return p ? idx->shard[p - idx->key] : NULL;
}

int tfs_model_index_format(const char *old, size_t oldlen, uint64_t total_size, size_t n,
			   char *const *keys, char *const *shards, char **out)
{
	cJSON *root = old ? cJSON_ParseWithLength(old, oldlen) : cJSON_CreateObject();
	cJSON *md, *wm;
	char *text;
	int rc = -ENOMEM;

	if (old && (!root || !cJSON_IsObject(root))) {
		rc = -EBADMSG;
		goto out;
	}
	if (!root)
		goto out;
	md = cJSON_GetObjectItemCaseSensitive(root, "metadata");
	if (!cJSON_IsObject(md)) {
		cJSON_DeleteItemFromObjectCaseSensitive(root, "metadata");
		if (!(md = cJSON_AddObjectToObject(root, "metadata")))
			goto out;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(md, "total_size");
	if (!cJSON_AddNumberToObject(md, "total_size", (double)total_size))
		goto out;
	cJSON_DeleteItemFromObjectCaseSensitive(root, "weight_map");
	if (!(wm = cJSON_AddObjectToObject(root, "weight_map")))
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!cJSON_AddStringToObject(wm, keys[i], shards[i]))
			goto out;
	if (!(text = cJSON_Print(root)))
		goto out;
	*out = text;
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}
