/* Tensor records (records.h): read back from Redis (another node's, or this node's to
 * check), this node's written behind, the user's attributes, and this node's found at
 * start-up. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtype.h"
#include "log.h"
#include "store/conn.h"
#include "store/mirror.h"
#include "store/records.h"
#include "store/schema.h"
#include "store/writer.h"
#include "strutil.h"


int tfs_store_tensor(const char *name, struct tfs_meta *m)
{
	char key[TFS_KEYMAX], why[128];
	const char *f[64], *v[64];
	size_t fl[64], vl[64];
	redisReply *r;
	size_t n;
	int rc;

	if ((rc = tfs_key(key, sizeof(key), "tensor", name)))
		return rc;
	r = tfs_writer_read(&rc, "HGETALL %s", key);
	if (!r && rc == -EPROTO) {
		/* Redis refused: the key is not a hash (written by hand). Garbage, shown as
		 * such and removable, not an I/O error on every stat and rm. */
		tfs_log(LOG_WARNING, "record %s is not a hash: skipped", key);
		return -EBADMSG;
	}
	if (!r)
		return -EIO;
	if (r->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		return -EIO;
	}
	if (r->elements == 0) {
		freeReplyObject(r);
		return -ENOENT;
	}
	n = 0;
	for (size_t i = 0; i + 1 < r->elements && n < 64; i += 2) {
		redisReply *a = r->element[i], *b = r->element[i + 1];
		if (a->type != REDIS_REPLY_STRING || b->type != REDIS_REPLY_STRING)
			continue;
		/* Only the metadata fields; user attributes and holders are read elsewhere. */
		if (strncmp(a->str, "x:", 2) == 0 || strncmp(a->str, "holder:", 7) == 0)
			continue;
		f[n] = a->str; fl[n] = a->len; v[n] = b->str; vl[n] = b->len;
		n++;
	}
	rc = tfs_meta_from_fields(m, n, f, fl, v, vl, why, sizeof(why));
	if (rc)
		tfs_log(LOG_WARNING, "record %s is malformed (%s): skipped", key, why);
	freeReplyObject(r);
	return rc;
}

/* --- this node's tensor records (tensor.c, holders.c): queued, written behind --- */

int tfs_store_save(const char *key, const struct tfs_meta *m, int replace)
{
	return tfs_writer_save(key, m, replace);
}

int tfs_store_save_refcount(const char *key, int64_t refcount)
{
	char n[24];

	snprintf(n, sizeof(n), "%lld", (long long)refcount);
	return tfs_writer_hset1(key, "refcount", n);
}

int tfs_store_delete(const char *key)
{
	tfs_mirror_forget(key);
	return tfs_writer_cmdf("DEL %s", key);
}

int tfs_store_rename(const char *from_key, const char *to_key)
{
	tfs_mirror_rename(from_key, to_key);
	return tfs_writer_cmdf("RENAME %s %s", from_key, to_key);
}

int tfs_store_holder_save(const char *key, const char *node, int64_t pid, int64_t uid,
			  int64_t count, int64_t refcount)
{
	char field[TFS_NODE_MAX + 32], n[48], rc[24];

	tfs_holder_field(field, sizeof(field), node, pid);
	if (uid >= 0)
		snprintf(n, sizeof(n), "%lld %lld", (long long)count, (long long)uid);
	else
		snprintf(n, sizeof(n), "%lld", (long long)count);
	if (refcount < 0)
		return tfs_writer_cmdf("HSET %s %s %s", key, field, n);
	snprintf(rc, sizeof(rc), "%lld", (long long)refcount);
	return tfs_writer_cmdf("HSET %s %s %s refcount %s", key, field, n, rc);
}

int tfs_store_holder_delete(const char *key, const char *node, int64_t pid)
{
	char field[TFS_NODE_MAX + 32];

	tfs_holder_field(field, sizeof(field), node, pid);
	return tfs_writer_cmdf("HDEL %s %s", key, field);
}

/* --- the user's own attributes: field x:<name> of a record (xattr.c) --- */

int tfs_store_user_get(const char *key, const char *name, redisReply **out)
{
	char field[300];
	redisReply *r;
	int rc;

	*out = NULL;
	if ((rc = tfs_user_field(field, sizeof(field), name)))
		return rc;
	r = tfs_writer_read(&rc, "HGET %s %s", key, field);
	if (!r)
		return -EIO;
	if (r->type != REDIS_REPLY_STRING) {
		freeReplyObject(r);
		return -ENODATA;
	}
	*out = r;
	return 0;
}

/* XATTR_REPLACE in one step: set only if the field is there. */
static const char replace_lua[] =
	"if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then "
	"redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) return 1 end return 0";

int tfs_store_user_set(const char *key, int64_t owner, const char *name, const char *value,
		       size_t size, int create, int replace)
{
	char field[300];
	redisReply *r;
	int rc;

	if ((rc = tfs_user_field(field, sizeof(field), name)))
		return rc;
	if (replace)
		r = tfs_writer_read(&rc, "EVAL %s 1 %s %s %b", replace_lua, key, field, value, size);
	else
		r = tfs_writer_read(&rc, create ? "HSETNX %s %s %b" : "HSET %s %s %b", key, field,
				  value, size);
	if (!r)
		return -EIO;
	rc = r->type != REDIS_REPLY_INTEGER ? -EIO :
	     replace && r->integer == 0 ? -ENODATA : create && r->integer == 0 ? -EEXIST : 0;
	freeReplyObject(r);
	if (rc == 0)
		tfs_mirror_attr_set(key, owner, name, value, size);
	return rc;
}

int tfs_store_user_list(const char *key, redisReply **out)
{
	*out = NULL;
	return tfs_writer_read_array("HKEYS", key, out);
}

const char *tfs_store_user_name(const redisReply *e)
{
	return e->type == REDIS_REPLY_STRING && strncmp(e->str, "x:", 2) == 0 ? e->str + 2 : NULL;
}

int tfs_store_user_remove(const char *key, const char *name)
{
	char field[300];
	redisReply *r;
	int rc;

	if ((rc = tfs_user_field(field, sizeof(field), name)))
		return rc;
	r = tfs_writer_read(&rc, "HDEL %s %s", key, field);
	if (!r)
		return -EIO;
	rc = r->type == REDIS_REPLY_INTEGER && r->integer ? 0 : -ENODATA;
	freeReplyObject(r);
	tfs_mirror_attr_drop(key, name);
	return rc;
}

/* --- start-up --- */

/* A holder field's value: "<count>" (the shared queue's hold, *uid -1) or "<count> <uid>",
 * one space, decimal, nothing else. 0 or -EBADMSG. */
static int holder_value(const char *s, size_t len, uint64_t *count, int64_t *uid)
{
	const char *sp = memchr(s, ' ', len);
	uint64_t u;

	*uid = -1;
	if (tfs_parse_u64(s, sp ? (size_t)(sp - s) : len, count) || *count == 0 ||
	    *count > INT32_MAX)
		return -EBADMSG;
	if (!sp)
		return 0;
	if (tfs_parse_u64(sp + 1, len - (size_t)(sp + 1 - s), &u) || u >= (uid_t)-1)
		return -EBADMSG;
	*uid = (int64_t)u;
	return 0;
}

/* Parses one record (HGETALL's reply r) into rec; -EBADMSG when it is not this node's or
 * is garbage. */
static int parse_record(redisReply *r, struct tfs_store_rec *rec)
{
	const char *f[64], *v[64];
	size_t fl[64], vl[64], n = 0, nh = 0;
	char why[128];
	int mine = 0;

	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		redisReply *a = r->element[i], *b = r->element[i + 1];

		if (a->type != REDIS_REPLY_STRING || b->type != REDIS_REPLY_STRING)
			continue;
		if (strncmp(a->str, "holder:", 7) == 0)
			nh++;
		if (strcmp(a->str, "node") == 0 && strcmp(b->str, tfs_schema.node) == 0)
			mine = 1;
	}
	if (!mine)
		return -ENOENT;
	rec->holders = nh ? calloc(nh, sizeof(*rec->holders)) : NULL;
	if (nh && !rec->holders)
		return -ENOMEM;
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		redisReply *a = r->element[i], *b = r->element[i + 1];
		if (a->type != REDIS_REPLY_STRING || b->type != REDIS_REPLY_STRING)
			continue;
		if (strncmp(a->str, "holder:", 7) == 0) {
			struct tfs_store_holder *h = &rec->holders[rec->nholders];
			const char *colon = strrchr(a->str + 7, ':');
			uint64_t pid, count;
			int64_t uid;

			if (!colon || (size_t)(colon - a->str - 7) >= sizeof(h->node) ||
			    tfs_parse_u64(colon + 1, strlen(colon + 1), &pid) || pid > INT64_MAX ||
			    holder_value(b->str, b->len, &count, &uid))
				continue;    /* garbage: not counted */
			memcpy(h->node, a->str + 7, (size_t)(colon - a->str - 7));
			h->pid = (int64_t)pid;
			h->count = (int64_t)count;
			h->uid = uid;
			rec->nholders++;
			continue;
		}
		if (strncmp(a->str, "x:", 2) == 0 || n == 64)
			continue;
		f[n] = a->str; fl[n] = a->len; v[n] = b->str; vl[n] = b->len;
		n++;
	}
	if (tfs_meta_from_fields(&rec->meta, n, f, fl, v, vl, why, sizeof(why))) {
		tfs_log(LOG_WARNING, "record %s is malformed (%s)", rec->key, why);
		return -EBADMSG;
	}
	return 0;
}

/* Whether key holds something other than a hash (or nothing): 1, else 0 (a hash, or
 * Redis did not say). */
static int not_a_hash(const char *key)
{
	int rc;
	redisReply *t = tfs_writer_read(&rc, "TYPE %s", key);
	int other = t && t->type == REDIS_REPLY_STATUS && strcmp(t->str, "hash") != 0;

	freeReplyObject(t);
	return other;
}

/* One SCAN pass over pattern: each record of this node goes to fn; those fn refuses go,
 * and an error of fn ends the walk (tfs_store_node_records). */
static int walk(const char *pattern, int linked,
		int (*fn)(struct tfs_store_rec *rec, void *arg), void *arg, int *removed)
{
	size_t plen = strlen(tfs_schema.prefix) + strlen(":tensor:");
	char cursor[32] = "0", parent[TFS_PATH_MAX], dk[TFS_KEYMAX];
	const char *base;
	int rc;

	do {
		redisReply *r = tfs_writer_read(&rc, "SCAN %s MATCH %s COUNT 1000", cursor, pattern);
		if (!r)
			return -EIO;
		if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		    r->element[0]->type != REDIS_REPLY_STRING) {
			freeReplyObject(r);
			return -EIO;
		}
		snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
		for (size_t i = 0; i < r->element[1]->elements; i++) {
			struct tfs_store_rec rec;
			const char *key = r->element[1]->element[i]->str;
			redisReply *h = tfs_writer_read(&rc, "HGETALL %s", key);
			int e;

			/* An error reply is no verdict on the record unless the key is not a
			 * hash (BUSY, LOADING or NOPERM pass): skipping the record would leave
			 * its memory to be freed as named by no record. */
			if (!h && (rc != -EPROTO || !not_a_hash(key))) {
				freeReplyObject(r);
				return -EIO;
			}
			if (!h || h->type != REDIS_REPLY_ARRAY || h->elements == 0) {
				freeReplyObject(h);
				continue;    /* not a hash, or gone meanwhile: not ours to judge */
			}
			memset(&rec, 0, sizeof(rec));
			rec.key = key;
			rec.name = linked ? key + plen : NULL;
			if (!linked) {
				const char *colon = strrchr(key, ':');
				uint64_t seq = 0;

				if (colon && tfs_parse_u64(colon + 1, strlen(colon + 1), &seq) == 0)
					rec.seq = seq;
			}
			e = parse_record(h, &rec);
			if (e == -ENOENT) {
				freeReplyObject(h);
				free(rec.holders);
				continue;    /* another node's */
			}
			if (e == 0)
				e = fn(&rec, arg);
			else if (e != -ENOMEM)
				e = 1;       /* malformed: it goes */
			free(rec.holders);
			/* The user attributes of a record kept, charged to its owner as if set
			 * now: a restart does not give an owner its quota back. */
			for (size_t j = 0; e == 0 && j + 1 < h->elements; j += 2) {
				const redisReply *a = h->element[j], *b = h->element[j + 1];

				if (a->type == REDIS_REPLY_STRING && b->type == REDIS_REPLY_STRING &&
				    tfs_store_user_name(a))
					tfs_mirror_attr_set(key, rec.meta.uid, tfs_store_user_name(a),
							    b->str, b->len);
			}
			freeReplyObject(h);
			if (e == 0)
				continue;
			if (e < 0) {
				freeReplyObject(r);
				return e;
			}
			tfs_mirror_forget(key);
			freeReplyObject(tfs_writer_read(&rc, "DEL %s", key));
			if (linked) {
				tfs_split(key + plen, parent, sizeof(parent), &base);
				if (tfs_key(dk, sizeof(dk), "dirents", parent) == 0)
					freeReplyObject(tfs_writer_read(&rc, "HDEL %s %s", dk, base));
			}
			(*removed)++;
		}
		freeReplyObject(r);
	} while (strcmp(cursor, "0"));
	return 0;
}

int tfs_store_node_records(int (*fn)(struct tfs_store_rec *rec, void *arg), void *arg)
{
	char pattern[600];
	int rc, removed = 0;

	snprintf(pattern, sizeof(pattern), "%s:tensor:*", tfs_schema.prefix);
	if ((rc = walk(pattern, 1, fn, arg, &removed)))
		return rc;
	snprintf(pattern, sizeof(pattern), "%s:unlinked:%s:*", tfs_schema.prefix, tfs_schema.node);
	if ((rc = walk(pattern, 0, fn, arg, &removed)))
		return rc;
	if (removed)
		tfs_log(LOG_NOTICE, "removed %d record(s) of node %s whose memory is gone",
			removed, tfs_schema.node);
	return 0;
}
