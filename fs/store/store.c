/* Directories and their entries in Redis (store.h): records, listings, rmdir and
 * moves. Layout (docs/redis.md; every key in schema.h):
 *   <prefix>:tensor:<name>   hash, one per tensor (docs/contract.md)
 *   <prefix>:dir:<name>      hash, one per directory ("" is the root)
 *   <prefix>:dirents:<name>  hash, a directory's entries: child name -> 't' or 'd'
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtype.h"
#include "log.h"
#include "store/claims.h"
#include "store/conn.h"
#include "store/dircache.h"
#include "store/mirror.h"
#include "store/records.h"
#include "store/restore.h"
#include "store/store.h"
#include "store/writer.h"
#include "strutil.h"
#include "tensors/tensor.h"
#include "store/schema.h"
#include "util/clock.h"

void tfs_store_dir_default(struct tfs_dirrec *d)
{
	memset(d, 0, sizeof(*d));
	d->mode = 0755;
	d->uid = geteuid();
	d->gid = getegid();
}

void tfs_store_dir_inherit(const struct tfs_dirrec *parent, int is_dir, uint32_t *gid,
			   uint32_t *mode)
{
	if (!(parent->mode & S_ISGID))
		return;
	*gid = parent->gid;
	if (is_dir)
		*mode |= S_ISGID;
}

int tfs_store_dir(const char *name, struct tfs_dirrec *d)
{
	char key[TFS_KEYMAX];
	redisReply *r;
	uint64_t gen;
	int rc;

	if ((rc = tfs_key(key, sizeof(key), "dir", name)))
		return rc;
	if (tfs_dircache_get_dir(name, d))
		return 0;
	gen = tfs_dircache_gen();
	r = tfs_writer_read(&rc, "HGETALL %s", key);
	if (!r)
		return -EIO;
	tfs_store_dir_default(d);
	if (r->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		return -EIO;
	}
	if (r->elements == 0) {
		freeReplyObject(r);
		/* The root always exists: its record gone means Redis lost it (an empty
		 * restart, a hand's DEL). Written back now, so the mount's root never gives
		 * ESTALE, and the rest at the next resync. */
		if (name[0] == '\0' && tfs_store_restore_root() == 0)
			return tfs_store_dir(name, d);
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
		else if (strcmp(a->str, "atime") == 0)
			d->atime = x;
		else if (strcmp(a->str, "nsub") == 0 && x >= 0)
			d->nsub = x;
		else if (strcmp(a->str, "ino") == 0 && x > 1)
			d->ino = (uint64_t)x;
		else if (strcmp(a->str, "device") == 0 && x >= 0 && x < 1 << 20) {
			d->has_device = 1;
			d->device = (int)x;
		}
	}
	freeReplyObject(r);
	tfs_mirror_dir_put(key, d);
	tfs_dircache_put_dir(name, d, gen);
	return 0;
}

int tfs_store_dir_write(const char *name, const struct tfs_dirrec *d)
{
	char key[TFS_KEYMAX], mode[16], uid[16], gid[16], ct[24], mt[24], at[24], dev[16], ino[24];
	const char *argv[24];
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
	if (d->atime) {
		snprintf(at, sizeof(at), "%lld", (long long)d->atime);
		argv[argc++] = "atime"; argv[argc++] = at;
	}
	if (d->ino) {
		snprintf(ino, sizeof(ino), "%llu", (unsigned long long)d->ino);
		argv[argc++] = "ino"; argv[argc++] = ino;
	}
	if (d->has_dtype) {
		argv[argc++] = "dtype";
		argv[argc++] = tfs_dtype_name(d->dtype);
	}
	if (d->has_device) {
		snprintf(dev, sizeof(dev), "%d", d->device);
		argv[argc++] = "device";
		argv[argc++] = dev;
	}
	if ((rc = tfs_writer_cmdv(argc, argv, NULL)))
		return rc;
	tfs_mirror_dir_put(key, d);
	tfs_dircache_put_dir(name, d, 0);
	return 0;
}

int tfs_store_unlink(const char *name)
{
	char parent[TFS_PATH_MAX], key[TFS_KEYMAX];
	const char *base;
	int rc;

	tfs_split(name, parent, sizeof(parent), &base);
	if ((rc = tfs_key(key, sizeof(key), "dirents", parent)))
		return rc;
	if ((rc = tfs_writer_cmdf("HDEL %s %s", key, base)))
		return rc;
	tfs_dircache_set_type(parent, base, 0);
	return 0;
}

static int entry_type(const redisReply *v)
{
	return v->type == REDIS_REPLY_STRING && v->len == 1 &&
	       (v->str[0] == 't' || v->str[0] == 'd') ? v->str[0] : -ENOENT;
}

int tfs_store_type(const char *name)
{
	char parent[TFS_PATH_MAX], key[TFS_KEYMAX];
	const char *base;
	redisReply *r;
	uint64_t gen;
	int rc, cacheable;

	if (name[0] == '\0')
		return 'd';
	tfs_split(name, parent, sizeof(parent), &base);
	if ((rc = tfs_key(key, sizeof(key), "dirents", parent)))
		return rc;
	rc = tfs_dircache_get_type(parent, base, &cacheable);
	if (rc)
		return rc;
	if (!cacheable) {
		r = tfs_writer_read(&rc, "HGET %s %s", key, base);
		if (!r)
			return -EIO;
		rc = entry_type(r);
		freeReplyObject(r);
		return rc;
	}
	/* The whole directory at once: the next lookups of names in it, present or not
	 * (a create looks its new name up first), need no round trip. */
	gen = tfs_dircache_gen();
	r = tfs_writer_read(&rc, "HGETALL %s", key);
	if (!r)
		return -EIO;
	rc = -ENOENT;
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		const redisReply *a = r->element[i];
		if (a->type == REDIS_REPLY_STRING && strcmp(a->str, base) == 0) {
			rc = entry_type(r->element[i + 1]);
			break;
		}
	}
	tfs_dircache_put_ents(parent, r, gen);
	freeReplyObject(r);
	return rc;
}

int tfs_store_dir_entries(const char *name, redisReply **out)
{
	char key[TFS_KEYMAX];
	int rc;

	*out = NULL;
	rc = *name ? tfs_store_type(name) : 'd';
	if (rc < 0)
		return rc;
	if (rc != 'd')
		return -ENOTDIR;
	if ((rc = tfs_key(key, sizeof(key), "dirents", name)))
		return rc;
	return tfs_writer_read_array("HGETALL", key, out);
}

static int del_keys(const char *kind1, const char *kind2, const char *name)
{
	char k1[TFS_KEYMAX], k2[TFS_KEYMAX];
	redisReply *r;
	int rc;

	if (tfs_key(k1, sizeof(k1), kind1, name) || tfs_key(k2, sizeof(k2), kind2, name))
		return -ENAMETOOLONG;
	r = tfs_writer_read(&rc, "DEL %s %s", k1, k2);
	freeReplyObject(r);
	tfs_dircache_forget(name);
	return r ? 0 : -EIO;
}

/* rmdir as one step: another node's create between the emptiness check and the removal
 * would otherwise leave a tensor in no directory. */
static const char rmdir_lua[] =
	"local t = redis.call('HGET', KEYS[3], ARGV[1]) "
	"if not t then return 2 end "
	"if t ~= 'd' then return 3 end "
	"if redis.call('HLEN', KEYS[2]) > 0 then return 1 end "
	"redis.call('DEL', KEYS[1], KEYS[2]) "
	"redis.call('HDEL', KEYS[3], ARGV[1]) "
	"return 0";

int tfs_store_rmdir(const char *name)
{
	char parent[TFS_PATH_MAX], *k1 = NULL, *k2 = NULL, *k3 = NULL;
	const char *base;
	redisReply *r;
	int rc;

	if (name[0] == '\0')
		return -EBUSY;
	tfs_split(name, parent, sizeof(parent), &base);
	k1 = malloc(TFS_KEYMAX);
	k2 = malloc(TFS_KEYMAX);
	k3 = malloc(TFS_KEYMAX);
	rc = !k1 || !k2 || !k3 ? -ENOMEM : 0;
	if (rc == 0 && (tfs_key(k1, TFS_KEYMAX, "dir", name) ||
			tfs_key(k2, TFS_KEYMAX, "dirents", name) ||
			tfs_key(k3, TFS_KEYMAX, "dirents", parent)))
		rc = -ENAMETOOLONG;
	if (rc == 0) {
		r = tfs_writer_read(&rc, "EVAL %s 3 %s %s %s %s", rmdir_lua, k1, k2, k3, base);
		if (!r || r->type != REDIS_REPLY_INTEGER)
			rc = -EIO;
		else
			rc = r->integer == 0 ? 0 : r->integer == 1 ? -ENOTEMPTY :
			     r->integer == 2 ? -ENOENT : -ENOTDIR;
		freeReplyObject(r);
	}
	if (rc == 0) {
		tfs_mirror_forget(k1);
		tfs_dircache_forget(name);
		tfs_dircache_set_type(parent, base, 0);
	}
	free(k1);
	free(k2);
	free(k3);
	return rc;
}

int tfs_store_remove_tensor(const char *name)
{
	char key[TFS_KEYMAX];
	int rc = del_keys("tensor", "tensor", name);

	if (rc == 0 && tfs_key(key, sizeof(key), "tensor", name) == 0)
		tfs_mirror_forget(key);
	return rc ? rc : tfs_store_unlink(name);
}

static int rename_key(const char *kind, const char *from, const char *to)
{
	char k1[TFS_KEYMAX], k2[TFS_KEYMAX];
	redisReply *r;
	int rc;

	if (tfs_key(k1, sizeof(k1), kind, from) || tfs_key(k2, sizeof(k2), kind, to))
		return -ENAMETOOLONG;
	r = tfs_writer_read(&rc, "EXISTS %s", k1);
	if (!r)
		return -EIO;
	rc = r->integer ? 1 : 0;
	freeReplyObject(r);
	if (!rc)
		return 0;
	r = tfs_writer_read(&rc, "RENAME %s %s", k1, k2);
	freeReplyObject(r);
	if (strcmp(kind, "tensor")) {
		tfs_dircache_forget(from);
		tfs_dircache_forget(to);
	}
	return r ? 0 : -EIO;
}

/* Walks a directory's subtree. check=1: fails with -EREMOTE when another node's tensor is
 * inside (its owner keys its memory by name). check=0: moves every key to the new path. */
static int move_tree(const char *from, const char *to, int check)
{
	char *key, *a = NULL, *b = NULL;
	redisReply *r;
	int rc = 0;

	/* On the heap: a frame per level of the tree, and trees may be deep. */
	key = malloc(TFS_KEYMAX);
	if (!key)
		return -ENOMEM;
	if ((rc = tfs_key(key, TFS_KEYMAX, "dirents", from))) {
		free(key);
		return rc;
	}
	r = tfs_writer_read(&rc, "HGETALL %s", key);
	free(key);
	if (!r)
		return -EIO;
	for (size_t i = 0; rc == 0 && i + 1 < r->elements; i += 2) {
		const char *e = r->element[i]->str;
		if (r->element[i]->type != REDIS_REPLY_STRING ||
		    r->element[i + 1]->type != REDIS_REPLY_STRING)
			continue;
		a = tfs_path_join(from, e);
		b = tfs_path_join(to, e);
		if (!a || !b) {
			rc = -ENOMEM;
		} else if (strlen(b) >= TFS_PATH_MAX) {
			rc = -ENAMETOOLONG;
		} else if (r->element[i + 1]->str[0] == 'd') {
			rc = move_tree(a, b, check);
		} else if (check) {
			if (!tfs_table_find(a))
				rc = -EREMOTE;
		} else {
			struct tfsd_tensor *t = tfs_table_find(a);
			rc = t ? tfs_tensor_rename(t, b) : rename_key("tensor", a, b);
		}
		free(a);
		free(b);
		a = b = NULL;
	}
	freeReplyObject(r);
	if (rc == 0 && !check) {
		rc = rename_key("dir", from, to);
		if (rc == 0)
			rc = rename_key("dirents", from, to);
	}
	return rc;
}

int tfs_store_move_dir(const char *from, const char *to)
{
	int rc = move_tree(from, to, 1);

	if (rc == 0)
		rc = tfs_store_link(to, 'd');
	if (rc)
		return rc;
	rc = move_tree(from, to, 0);
	if (rc) {
		tfs_store_unlink(to);
		return rc;
	}
	tfs_mirror_move_tree(tfs_schema.prefix, from, to);
	return tfs_store_unlink(from);
}

/* The count of subdirectories changes by increments, so that two nodes changing one
 * directory at once both count; the times are simply the latest. */
int tfs_store_dir_changed(const char *name, struct tfs_dirrec *d, int nsub)
{
	char key[TFS_KEYMAX], t[24], n[24];
	int rc;

	if ((rc = tfs_key(key, sizeof(key), "dir", name)))
		return rc;
	d->mtime = d->ctime = tfs_now();
	snprintf(t, sizeof(t), "%lld", (long long)d->mtime);
	if ((rc = tfs_writer_cmdf("HSET %s mtime %s ctime %s", key, t, t)))
		return rc;
	if (nsub) {
		d->nsub = d->nsub + nsub < 0 ? 0 : d->nsub + nsub;
		snprintf(n, sizeof(n), "%d", nsub);
		if ((rc = tfs_writer_cmdf("HINCRBY %s nsub %s", key, n)))
			return rc;
	}
	tfs_mirror_dir_put(key, d);
	tfs_dircache_put_dir(name, d, 0);
	return 0;
}
