/* What Redis lost, given back from what this node knows (restore.h, mirror.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "store/conn.h"
#include "store/dircache.h"
#include "store/mirror.h"
#include "store/restore.h"
#include "store/store.h"
#include "store/writer.h"
#include "strutil.h"
#include "tier.h"
#include "store/schema.h"
#include "util/clock.h"

/* --- what Redis lost, given back (mirror.h) --- */

/* A directory's record written back only when Redis lacks it, in one step (another node
 * may be restoring or making it at the same moment), with its entry in its parent. A field
 * at a time: unpack() of thousands of user attributes would overflow Lua's stack. */
/* A record is whole when it has its mode: after a loss, a directory's key can come back
 * with a few fields (the times an entry made in it writes), and those, being newer, stay.
 * The entry in the parent is restored even beside a whole record: mkdir claims the entry
 * first and writes the record after, so a loss between the two leaves exactly that. Nothing
 * else does: rmdir removes both in one script, and a rename links the new name before it
 * moves the record and unlinks the old one after. */
static const char restore_dir_lua[] =
	"local whole = redis.call('HEXISTS', KEYS[1], 'mode') == 1 "
	"local added = 0 "
	"if not whole then "
	"  for i = 2, #ARGV - 1, 2 do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end "
	"end "
	"if ARGV[1] ~= '' then added = redis.call('HSETNX', KEYS[2], ARGV[1], 'd') end "
	"if whole and added == 0 then return 0 end "
	"return 1";

/* Set by a lookup that found the root missing (and wrote it back): the next resync then
 * restores every directory the mirror knows, not only those its tensors need. */
static int root_lost;

/* Directory name's record (d: the mirror's, or NULL for the defaults) and attributes:
 * 1 written, 0 Redis had it, -EIO, -ENOMEM, -ENAMETOOLONG. */
static int restore_dir(const char *name, const struct tfs_dirrec *d,
		       const struct tfs_mirror_attr *attrs)
{
	char key[TFS_KEYMAX], pkey[TFS_KEYMAX], parent[TFS_PATH_MAX], num[10][24], *fields = NULL;
	const char *base, **argv = NULL;
	size_t *len = NULL, nattr = 0, argc = 0;
	struct tfs_dirrec def;
	redisReply *r;
	char *cmd = NULL;
	long long clen;
	int rc;

	tfs_split(name, parent, sizeof(parent), &base);
	if (tfs_key(key, sizeof(key), "dir", name) || tfs_key(pkey, sizeof(pkey), "dirents", parent))
		return -ENAMETOOLONG;
	if (!d) {
		tfs_store_dir_default(&def);
		def.ctime = def.mtime = tfs_now();
		d = &def;
	}
	for (const struct tfs_mirror_attr *a = attrs; a; a = a->next)
		nattr++;
	argv = calloc(26 + 2 * nattr, sizeof(*argv));
	len = calloc(26 + 2 * nattr, sizeof(*len));
	fields = malloc(nattr * 304 + 1);
	rc = -ENOMEM;
	if (!argv || !len || !fields)
		goto out;
#define ARG(s, l) do { argv[argc] = (s); len[argc++] = (l); } while (0)
#define SARG(s) ARG((s), strlen(s))
	SARG("EVAL"); SARG(restore_dir_lua); SARG("2"); SARG(key); SARG(pkey);
	ARG(name[0] ? base : "", name[0] ? strlen(base) : 0);
	snprintf(num[0], 24, "%o", d->mode & 07777);
	snprintf(num[1], 24, "%u", d->uid);
	snprintf(num[2], 24, "%u", d->gid);
	snprintf(num[3], 24, "%lld", (long long)d->ctime);
	snprintf(num[4], 24, "%lld", (long long)d->mtime);
	snprintf(num[5], 24, "%lld", (long long)d->nsub);
	SARG("mode"); SARG(num[0]); SARG("uid"); SARG(num[1]); SARG("gid"); SARG(num[2]);
	SARG("ctime"); SARG(num[3]); SARG("mtime"); SARG(num[4]); SARG("nsub"); SARG(num[5]);
	if (d->atime) {
		snprintf(num[6], 24, "%lld", (long long)d->atime);
		SARG("atime"); SARG(num[6]);
	}
	if (d->ino) {
		snprintf(num[7], 24, "%llu", (unsigned long long)d->ino);
		SARG("ino"); SARG(num[7]);
	}
	if (d->has_dtype) {
		SARG("dtype"); SARG(tfs_dtype_name(d->dtype));
	}
	if (d->has_device) {
		tfs_tier_name(d->device, num[8], 24);
		SARG("device"); SARG(num[8]);
	}
	nattr = 0;
	for (const struct tfs_mirror_attr *a = attrs; a; a = a->next, nattr++) {
		char *f = fields + nattr * 304;

		if (tfs_user_field(f, 304, a->name))
			continue;
		SARG(f);
		ARG(a->value, a->size);
	}
#undef SARG
#undef ARG
	clen = redisFormatCommandArgv(&cmd, (int)argc, argv, len);
	rc = -ENOMEM;
	if (clen < 0)
		goto out;
	r = tfs_conn_run(&rc, cmd, (size_t)clen);
	rc = r && r->type == REDIS_REPLY_INTEGER ? (int)r->integer : -EIO;
	freeReplyObject(r);
	if (rc == 1) {
		/* Without a record of its own it is a directory made anew (the root of a
		 * fresh Redis, the parent of a tensor), not a loss worth a line. */
		if (d != &def)
			tfs_log(LOG_NOTICE, "directory /%s was missing from Redis: written back", name);
		tfs_dircache_forget(name);
		if (name[0])
			tfs_dircache_forget(parent);
	}
out:
	redisFreeCommand(cmd);
	free(argv);
	free(len);
	free(fields);
	return rc;
}

/* The mirror's record and attributes of directory name, restored when missing. */
static int restore_known_dir(const char *name)
{
	char key[TFS_KEYMAX];
	struct tfs_mirror_item *it;
	int n, rc;

	if (tfs_key(key, sizeof(key), "dir", name))
		return -ENAMETOOLONG;
	if ((n = tfs_mirror_snapshot(key, 1, &it)) < 0)
		return n;
	rc = restore_dir(name, n && it[0].has_dir ? &it[0].d : NULL, n ? it[0].attrs : NULL);
	tfs_mirror_snapshot_free(it, n);
	return rc;
}

int tfs_store_restore_root(void)
{
	int rc = restore_known_dir("");

	if (rc == 1)
		__atomic_store_n(&root_lost, 1, __ATOMIC_RELEASE);
	return rc < 0 ? rc : 0;
}

int tfs_store_restore_parents(const char *name)
{
	char parent[TFS_PATH_MAX];
	struct tfs_dirrec d;
	const char *base;
	int rc;

	tfs_split(name, parent, sizeof(parent), &base);
	/* Usually cached: a resync of many tensors costs no round trip per tensor. */
	rc = tfs_store_dir(parent, &d);
	if (rc != -ENOENT)
		return rc;
	if (parent[0] && (rc = tfs_store_restore_parents(parent)))
		return rc;
	/* The root missing is the sign that Redis lost everything: restore_root tells the
	 * next tfs_store_lost, or the other directories would never come back. */
	if (!parent[0])
		return tfs_store_restore_root();
	rc = restore_known_dir(parent);
	return rc < 0 ? rc : 0;
}

/* Parents before children: fewer slashes first, the root ("" after the prefix) first. */
static int depth_cmp(const void *a, const void *b)
{
	const struct tfs_mirror_item *x = a, *y = b;
	int dx = 0, dy = 0;

	for (const char *p = x->key; *p; p++)
		dx += *p == '/';
	for (const char *p = y->key; *p; p++)
		dy += *p == '/';
	if (dx != dy)
		return dx < dy ? -1 : 1;
	return strlen(x->key) < strlen(y->key) ? -1 : strlen(x->key) > strlen(y->key);
}

int tfs_store_lost(void)
{
	redisReply *r;
	int rc, lost;

	/* The root's mode, not the key: a directory's mtime update (an entry made in the root
	 * right after Redis lost everything) recreates the key with its times alone. */
	r = tfs_writer_read(&rc, "HEXISTS %s:dir: mode", tfs_schema.prefix);
	if (!r || r->type != REDIS_REPLY_INTEGER) {
		freeReplyObject(r);
		return -EIO;
	}
	lost = r->integer == 0;
	freeReplyObject(r);
	return lost || __atomic_load_n(&root_lost, __ATOMIC_ACQUIRE);
}

void tfs_store_restore_all(void)
{
	__atomic_store_n(&root_lost, 1, __ATOMIC_RELEASE);
}

int tfs_store_restore_dirs(void)
{
	char kp[TFS_KEYMAX];
	struct tfs_mirror_item *it;
	int n, rc;

	if ((rc = tfs_store_lost()) <= 0)
		return rc;
	__atomic_store_n(&root_lost, 0, __ATOMIC_RELEASE);
	/* The root gone means Redis lost what it held: every directory this node knows
	 * comes back, empty ones included, with its mode, owner, defaults and attributes. */
	if ((rc = restore_known_dir("")) < 0)
		return rc;
	snprintf(kp, sizeof(kp), "%s:dir:", tfs_schema.prefix);
	if ((n = tfs_mirror_snapshot(kp, 0, &it)) < 0)
		return n;
	if (n > 0) {
		tfs_log(LOG_WARNING, "Redis lost records: the %d directories this node "
			"knows written back where missing", n);
		qsort(it, n, sizeof(*it), depth_cmp);
	}
	rc = 0;
	/* One directory Redis refuses does not keep the others from coming back. */
	for (int i = 0; i < n; i++) {
		int e = it[i].has_dir && it[i].key[strlen(kp)] ?
			restore_dir(it[i].key + strlen(kp), &it[i].d, it[i].attrs) : 0;

		if (e < 0)
			rc = e;
	}
	tfs_mirror_snapshot_free(it, n);
	if (rc < 0)
		__atomic_store_n(&root_lost, 1, __ATOMIC_RELEASE);   /* the next resync retries */
	return rc < 0 ? rc : 0;
}

int tfs_store_restore_attrs(const char *key)
{
	struct tfs_mirror_item *it;
	int n, rc = 0;

	if ((n = tfs_mirror_snapshot(key, 1, &it)) <= 0)
		return n;
	for (struct tfs_mirror_attr *a = it[0].attrs; a && rc == 0; a = a->next) {
		char field[304];

		if (tfs_user_field(field, sizeof(field), a->name) == 0)
			rc = tfs_writer_cmdf("HSET %s %s %b", key, field, a->value, a->size);
	}
	tfs_mirror_snapshot_free(it, n);
	return rc;
}
