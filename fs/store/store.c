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
#include "tier.h"
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
		if (strcmp(a->str, "device") == 0) {
			d->has_device = tfs_tier_parse(b->str, b->len, &d->device) == 0;
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
		tfs_tier_name(d->device, dev, sizeof(dev));
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

/* --- a directory's tree moved (tensors/rename.c) --- */

/* The whole move in one step, so that a stall or a crash leaves the tree under one name
 * or the other, never split: the checks (source a directory, destination free and its
 * parent there, no other node's tensor inside, every new path within the bounds), then
 * every record and entries hash renamed, the entry moved between the parents, and the
 * marker set to "done". A marker already there ("cancel": tfs_store_move_settle gave the
 * move up) makes it do nothing. Reads through pcall: a key of another type written by
 * hand is garbage that moves along, not an error half-way. */
static const char move_tree_lua[] =
	"if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end "
	"if redis.call('HGET', KEYS[2], ARGV[5]) ~= 'd' then return -2 end "
	"if ARGV[10] ~= '1' and redis.call('EXISTS', KEYS[4]) == 0 then return -2 end "
	"if redis.call('HEXISTS', KEYS[3], ARGV[6]) == 1 then return -3 end "
	"local pfx, from, to, fl = ARGV[1], ARGV[2], ARGV[3], #ARGV[2] "
	"local maxp, maxd = tonumber(ARGV[7]), tonumber(ARGV[8]) "
	"local function depth(s) local n = 1 for _ in string.gmatch(s, '/') do n = n + 1 end "
	"  return n end "
	"local dd = depth(to) - depth(from) "
	"local function fits(p) return #to + #p - fl <= maxp and depth(p) + dd <= maxd end "
	"local dirs, tensors, i = {from}, {}, 1 "
	"while i <= #dirs do "
	"  local d = dirs[i] i = i + 1 "
	"  local ents = redis.pcall('HGETALL', pfx .. ':dirents:' .. d) "
	"  if type(ents) == 'table' and not ents.err then "
	"    for j = 1, #ents - 1, 2 do "
	"      local p = d .. '/' .. ents[j] "
	"      if not fits(p) then return -5 end "
	"      if ents[j + 1] == 'd' then dirs[#dirs + 1] = p else "
	"        local n = redis.pcall('HGET', pfx .. ':tensor:' .. p, 'node') "
	"        if type(n) == 'string' and n ~= ARGV[4] then return -4 end "
	"        tensors[#tensors + 1] = p "
	"      end "
	"    end "
	"  end "
	"end "
	"local function mv(kind, p) "
	"  local a = pfx .. ':' .. kind .. ':' .. p "
	"  if redis.call('EXISTS', a) == 1 then "
	"    redis.call('RENAME', a, pfx .. ':' .. kind .. ':' .. to .. string.sub(p, fl + 1)) "
	"  end "
	"end "
	"for _, p in ipairs(tensors) do mv('tensor', p) end "
	"for _, d in ipairs(dirs) do mv('dir', d) mv('dirents', d) end "
	"redis.call('HDEL', KEYS[2], ARGV[5]) "
	"redis.call('HSET', KEYS[3], ARGV[6], 'd') "
	"redis.call('SET', KEYS[1], 'done', 'EX', ARGV[9]) "
	"return #tensors + #dirs";

/* A move whose answer was lost: "done" when it ran (the marker goes), else the marker
 * becomes "cancel", so that it never runs later (its command may still sit in a socket
 * Redis has not read yet). */
static const char move_settle_lua[] =
	"local v = redis.call('GET', KEYS[1]) "
	"if v == 'done' then redis.call('DEL', KEYS[1]) return 1 end "
	"if v then return 0 end "
	"redis.call('SET', KEYS[1], 'cancel', 'EX', ARGV[1]) "
	"return 0";

/* How long a marker outlives its move: far past any stall a command could wait out. */
#define MOVE_MARKER_TTL "86400"

void tfs_store_move_marker(char *buf, size_t size, uint64_t id)
{
	snprintf(buf, size, "%s:move:%s:%016llx", tfs_schema.prefix, tfs_schema.node,
		 (unsigned long long)id);
}

/* What this node caches of the tree: moved. */
static void moved(const char *from, const char *to)
{
	char fp[TFS_PATH_MAX], tp[TFS_PATH_MAX];
	const char *fb, *tb;

	tfs_mirror_move_tree(tfs_schema.prefix, from, to);
	tfs_dircache_forget_tree(from);
	tfs_dircache_forget_tree(to);
	tfs_split(from, fp, sizeof(fp), &fb);
	tfs_split(to, tp, sizeof(tp), &tb);
	tfs_dircache_set_type(fp, fb, 0);
	tfs_dircache_set_type(tp, tb, 'd');
}

int tfs_store_move_tree(const char *from, const char *to, const char *marker,
			uint64_t max_path, uint64_t max_depth)
{
	char *fp = NULL, *tp = NULL, *k2 = NULL, *k3 = NULL, *k4 = NULL, mp[24], md[24];
	const char *fb, *tb;
	redisReply *r;
	int rc = -ENOMEM;

	fp = malloc(TFS_PATH_MAX);
	tp = malloc(TFS_PATH_MAX);
	k2 = malloc(TFS_KEYMAX);
	k3 = malloc(TFS_KEYMAX);
	k4 = malloc(TFS_KEYMAX);
	if (!fp || !tp || !k2 || !k3 || !k4)
		goto out;
	tfs_split(from, fp, TFS_PATH_MAX, &fb);
	tfs_split(to, tp, TFS_PATH_MAX, &tb);
	rc = -ENAMETOOLONG;
	if (tfs_key(k2, TFS_KEYMAX, "dirents", fp) || tfs_key(k3, TFS_KEYMAX, "dirents", tp) ||
	    tfs_key(k4, TFS_KEYMAX, "dir", tp))
		goto out;
	snprintf(mp, sizeof(mp), "%llu", (unsigned long long)max_path);
	snprintf(md, sizeof(md), "%llu", (unsigned long long)max_depth);
	r = tfs_writer_read(&rc, "EVAL %s 4 %s %s %s %s %s %s %s %s %s %s %s %s %s %s",
			  move_tree_lua, marker, k2, k3, k4, tfs_schema.prefix, from, to,
			  tfs_schema.node, fb, tb, mp, md, MOVE_MARKER_TTL, tp[0] ? "0" : "1");
	if (!r) {
		/* -EIO: sent or not, the answer is lost; the caller settles it later. */
		rc = rc == -EIO ? -EIO : rc == -ENOMEM ? -ENOMEM : -EPROTO;
		goto out;
	}
	rc = r->type != REDIS_REPLY_INTEGER ? -EPROTO : r->integer >= 0 ? 0 :
	     r->integer == -2 ? -ENOENT : r->integer == -3 ? -EEXIST :
	     r->integer == -4 ? -EREMOTE : r->integer == -5 ? -ENAMETOOLONG : -ECANCELED;
	freeReplyObject(r);
	if (rc == 0) {
		moved(from, to);
		tfs_writer_cmdf("DEL %s", marker);
	}
out:
	free(fp);
	free(tp);
	free(k2);
	free(k3);
	free(k4);
	return rc;
}

int tfs_store_move_settle(const char *marker, const char *from, const char *to)
{
	redisReply *r;
	int rc;

	r = tfs_writer_read(&rc, "EVAL %s 1 %s %s", move_settle_lua, marker, MOVE_MARKER_TTL);
	if (!r)
		return -EIO;
	rc = r->type == REDIS_REPLY_INTEGER ? (int)r->integer : -EIO;
	freeReplyObject(r);
	if (rc == 1)
		moved(from, to);
	return rc;
}

/* The count of subdirectories changes by increments, so that two nodes changing one
 * directory at once both count; the times are simply the latest. */
int tfs_store_dir_changed(const char *name, struct tfs_dirrec *d, int nsub)
{
	char key[TFS_KEYMAX], t[24], n[24];
	int64_t now = tfs_now();
	int rc;

	/* Times are in seconds: a directory changed many times within one writes them once,
	 * since its record (read through the cache, which follows every other writer) says
	 * so already. */
	if (!nsub && d->mtime == now && d->ctime == now)
		return 0;
	if ((rc = tfs_key(key, sizeof(key), "dir", name)))
		return rc;
	d->mtime = d->ctime = now;
	snprintf(t, sizeof(t), "%lld", (long long)d->mtime);
	if ((rc = tfs_writer_hset2(key, "mtime", t, "ctime", t)))
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

int tfs_store_dir_touch(const char *name)
{
	char key[TFS_KEYMAX], t[24];
	struct tfs_dirrec d;
	int rc;

	if (tfs_dircache_get_dir(name, &d))
		return tfs_store_dir_changed(name, &d, 0);
	if ((rc = tfs_key(key, sizeof(key), "dir", name)))
		return rc;
	d.mtime = tfs_now();
	snprintf(t, sizeof(t), "%lld", (long long)d.mtime);
	if ((rc = tfs_writer_hset2(key, "mtime", t, "ctime", t)))
		return rc;
	/* What the mirror holds of it, if anything, keeps the rest of what it knew. */
	if (tfs_mirror_dir_get(key, &d)) {
		d.mtime = d.ctime = tfs_now();
		tfs_mirror_dir_put(key, &d);
	}
	return 0;
}
