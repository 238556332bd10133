/* Redis records of directories and of tensors read back from Redis (another node's, or
 * this node's to check). Layout (README "Redis schema"):
 *   <prefix>:tensor:<name>   hash, one per tensor (SPEC §7)
 *   <prefix>:dir:<name>      hash, one per directory ("" is the root)
 *   <prefix>:dirents:<name>  hash, a directory's entries: child name -> 't' or 'd'
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "dtype.h"
#include "log.h"
#include "strutil.h"

#define KEYMAX 4400

int tfs_rec_tensor(const char *name, struct tfs_meta *m)
{
	char key[KEYMAX], why[128];
	const char *f[64], *v[64];
	size_t fl[64], vl[64];
	redisReply *r;
	size_t n;
	int rc;

	if ((rc = tfs_key(key, sizeof(key), "tensor", name)))
		return rc;
	r = tfs_rl_cmdf(&rc, "HGETALL %s", key);
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

int tfs_rec_dir(const char *name, struct tfs_dirrec *d)
{
	char key[KEYMAX];
	redisReply *r;
	int rc;

	if ((rc = tfs_key(key, sizeof(key), "dir", name)))
		return rc;
	r = tfs_rl_cmdf(&rc, "HGETALL %s", key);
	if (!r)
		return -EIO;
	memset(d, 0, sizeof(*d));
	d->mode = 0755;
	if (r->elements == 0) {
		freeReplyObject(r);
		return -ENOENT;
	}
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		redisReply *a = r->element[i], *b = r->element[i + 1];
		int64_t x;
		if (a->type != REDIS_REPLY_STRING || b->type != REDIS_REPLY_STRING)
			continue;
		if (strcmp(a->str, "dtype") == 0) {
			d->has_dtype = tfs_dtype_parse(b->str, b->len, &d->dtype) == 0;
			continue;
		}
		if (strcmp(a->str, "mode") == 0) {
			unsigned long mode;
			char *end;
			mode = strtoul(b->str, &end, 8);
			if (*end == '\0' && mode <= 07777)
				d->mode = (uint32_t)mode;
			continue;
		}
		if (tfs_parse_i64(b->str, b->len, &x))
			continue;      /* garbage in a field: keep the default */
		if (strcmp(a->str, "uid") == 0 && x >= 0)
			d->uid = (uint32_t)x;
		else if (strcmp(a->str, "gid") == 0 && x >= 0)
			d->gid = (uint32_t)x;
		else if (strcmp(a->str, "ctime") == 0)
			d->ctime = x;
		else if (strcmp(a->str, "mtime") == 0)
			d->mtime = x;
		else if (strcmp(a->str, "device") == 0 && x >= 0 && x < 1 << 20) {
			d->has_device = 1;
			d->device = (int)x;
		}
	}
	freeReplyObject(r);
	return 0;
}

int tfs_rec_dir_write(const char *name, const struct tfs_dirrec *d)
{
	char key[KEYMAX], mode[16], uid[16], gid[16], ct[24], mt[24], dev[16];
	const char *argv[16];
	redisReply *r;
	int argc = 0, rc;

	if ((rc = tfs_key(key, sizeof(key), "dir", name)))
		return rc;
	snprintf(mode, sizeof(mode), "%o", d->mode & 07777);
	snprintf(uid, sizeof(uid), "%u", d->uid);
	snprintf(gid, sizeof(gid), "%u", d->gid);
	snprintf(ct, sizeof(ct), "%lld", (long long)d->ctime);
	snprintf(mt, sizeof(mt), "%lld", (long long)d->mtime);
	argv[argc++] = "HSET";
	argv[argc++] = key;
	argv[argc++] = "mode"; argv[argc++] = mode;
	argv[argc++] = "uid"; argv[argc++] = uid;
	argv[argc++] = "gid"; argv[argc++] = gid;
	argv[argc++] = "ctime"; argv[argc++] = ct;
	argv[argc++] = "mtime"; argv[argc++] = mt;
	if (d->has_dtype) {
		argv[argc++] = "dtype";
		argv[argc++] = tfs_dtype_name(d->dtype);
	}
	if (d->has_device) {
		snprintf(dev, sizeof(dev), "%d", d->device);
		argv[argc++] = "device";
		argv[argc++] = dev;
	}
	r = tfs_rl_cmd(&rc, argc, argv, NULL);
	freeReplyObject(r);
	return r ? 0 : -EIO;
}

int tfs_rec_link(const char *name, char type)
{
	char parent[4096], key[KEYMAX], t[2] = { type, 0 };
	const char *base;
	redisReply *r;
	int rc, added;

	if ((rc = tfs_name_check(name)))
		return rc;         /* FUSE passes names up to 1024 bytes; NAME_MAX is 255 */
	tfs_split(name, parent, sizeof(parent), &base);
	if ((rc = tfs_key(key, sizeof(key), "dir", parent)))
		return rc;
	r = tfs_rl_cmdf(&rc, "EXISTS %s", key);
	if (!r)
		return -EIO;
	added = r->integer == 1;
	freeReplyObject(r);
	if (!added)
		return -ENOENT;
	tfs_key(key, sizeof(key), "dirents", parent);
	r = tfs_rl_cmdf(&rc, "HSETNX %s %s %s", key, base, t);
	if (!r)
		return -EIO;
	added = r->integer == 1;
	freeReplyObject(r);
	return added ? 0 : -EEXIST;
}

int tfs_rec_unlink(const char *name)
{
	char parent[4096], key[KEYMAX];
	const char *base;
	redisReply *r;
	int rc;

	tfs_split(name, parent, sizeof(parent), &base);
	if ((rc = tfs_key(key, sizeof(key), "dirents", parent)))
		return rc;
	r = tfs_rl_cmdf(&rc, "HDEL %s %s", key, base);
	freeReplyObject(r);
	return r ? 0 : -EIO;
}

int tfs_rec_type(const char *name)
{
	char parent[4096], key[KEYMAX];
	const char *base;
	redisReply *r;
	int rc;

	if (name[0] == '\0')
		return 'd';
	tfs_split(name, parent, sizeof(parent), &base);
	if ((rc = tfs_key(key, sizeof(key), "dirents", parent)))
		return rc;
	r = tfs_rl_cmdf(&rc, "HGET %s %s", key, base);
	if (!r)
		return -EIO;
	rc = r->type == REDIS_REPLY_STRING && r->len == 1 &&
	     (r->str[0] == 't' || r->str[0] == 'd') ? r->str[0] : -ENOENT;
	freeReplyObject(r);
	return rc;
}
