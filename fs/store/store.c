/* Redis records of directories and of tensors read back from Redis (another node's, or
 * this node's to check). Layout (README "Redis schema"):
 *   <prefix>:tensor:<name>   hash, one per tensor (docs/contract.md)
 *   <prefix>:dir:<name>      hash, one per directory ("" is the root)
 *   <prefix>:dirents:<name>  hash, a directory's entries: child name -> 't' or 'd'
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "store/conn.h"
#include "store/dircache.h"
#include "store/store.h"
#include "tensors/tensor.h"
#include "store/writer.h"
#include "dtype.h"
#include "log.h"
#include "store/mirror.h"
#include "strutil.h"
#include "queue/users.h"


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
	r = tfs_conn_cmdf(&rc, "HGETALL %s", key);
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

static int user_field(char *buf, size_t size, const char *name)
{
	int n = snprintf(buf, size, "x:%s", name);

	return n < 0 || (size_t)n >= size ? -ERANGE : 0;
}

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
		memset(&def, 0, sizeof(def));
		def.mode = 0755;
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
		snprintf(num[8], 24, "%d", d->device);
		SARG("device"); SARG(num[8]);
	}
	nattr = 0;
	for (const struct tfs_mirror_attr *a = attrs; a; a = a->next, nattr++) {
		char *f = fields + nattr * 304;

		if (user_field(f, 304, a->name))
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

static int restore_root(void)
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
		return restore_root();
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
	r = tfs_conn_cmdf(&rc, "HEXISTS %s:dir: mode", tfs_d.o.prefix);
	if (!r || r->type != REDIS_REPLY_INTEGER) {
		freeReplyObject(r);
		return -EIO;
	}
	lost = r->integer == 0;
	freeReplyObject(r);
	return lost || __atomic_load_n(&root_lost, __ATOMIC_ACQUIRE);
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
	snprintf(kp, sizeof(kp), "%s:dir:", tfs_d.o.prefix);
	if ((n = tfs_mirror_snapshot(kp, 0, &it)) < 0)
		return n;
	if (n > 0) {
		tfs_log(LOG_WARNING, "Redis lost the root's record: writing back the %d directories "
			"this node knows", n);
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

		if (user_field(field, sizeof(field), a->name) == 0)
			rc = tfs_writer_cmdf("HSET %s %s %b", key, field, a->value, a->size);
	}
	tfs_mirror_snapshot_free(it, n);
	return rc;
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
	r = tfs_conn_cmdf(&rc, "HGETALL %s", key);
	if (!r)
		return -EIO;
	memset(d, 0, sizeof(*d));
	d->mode = 0755;
	if (r->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		return -EIO;
	}
	if (r->elements == 0) {
		freeReplyObject(r);
		/* The root always exists: its record gone means Redis lost it (an empty
		 * restart, a hand's DEL). Written back now, so the mount's root never gives
		 * ESTALE, and the rest at the next resync. */
		if (name[0] == '\0' && restore_root() == 0)
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

/* --- claims whose answer was lost --- */

/* A claim sent but not answered (Redis stalled past the command timeout, or went away)
 * may still have taken the name when Redis went on. Such names are remembered here: a
 * retry of the same name by this node takes its own claim over, and the resync after
 * Redis came back gives the others back. */
struct lost_claim {
	char *name;
	char type;
	struct lost_claim *next;
};
static pthread_mutex_t lost_mu = PTHREAD_MUTEX_INITIALIZER;
static struct lost_claim *lost_claims;

/* Which record a claimed entry of type needs: tensor or dir. */
static const char *record_kind(char type)
{
	return type == 'd' ? "dir" : "tensor";
}

/* The entry of name still of type and with no record behind it, in one step. remove:
 * also take it out. 1 when so, 0 when not, -EIO. */
static const char stale_claim_lua[] =
	"if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end "
	"if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end "
	"if ARGV[3] == '1' then redis.call('HDEL', KEYS[1], ARGV[1]) end "
	"return 1";

static int stale_claim(const char *name, char type, int remove)
{
	char parent[TFS_PATH_MAX], ek[TFS_KEYMAX], rk[TFS_KEYMAX], t[2] = { type, 0 };
	const char *base;
	redisReply *r;
	int rc;

	tfs_split(name, parent, sizeof(parent), &base);
	if (tfs_key(ek, sizeof(ek), "dirents", parent) ||
	    tfs_key(rk, sizeof(rk), record_kind(type), name))
		return -ENAMETOOLONG;
	r = tfs_conn_cmdf(&rc, "EVAL %s 2 %s %s %s %s %s", stale_claim_lua, ek, rk, base, t,
			  remove ? "1" : "0");
	rc = r && r->type == REDIS_REPLY_INTEGER ? (int)r->integer : -EIO;
	freeReplyObject(r);
	if (rc == 1 && remove)
		tfs_dircache_set_type(parent, base, 0);
	return rc;
}

static void lost_claim_add(const char *name, char type)
{
	struct lost_claim *l = calloc(1, sizeof(*l));

	if (!l || !(l->name = strdup(name))) {
		free(l);
		tfs_log(LOG_ERR, "out of memory: the lost claim of /%s stays until unmount", name);
		return;
	}
	l->type = type;
	pthread_mutex_lock(&lost_mu);
	l->next = lost_claims;
	lost_claims = l;
	pthread_mutex_unlock(&lost_mu);
}

/* Takes name's lost claim of type off the list: 1 when it was there. */
static int lost_claim_take(const char *name, char type)
{
	struct lost_claim **p, *l;
	int found = 0;

	pthread_mutex_lock(&lost_mu);
	for (p = &lost_claims; *p; p = &(*p)->next) {
		if ((*p)->type == type && strcmp((*p)->name, name) == 0) {
			l = *p;
			*p = l->next;
			free(l->name);
			free(l);
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&lost_mu);
	return found;
}

int tfs_store_claims_settle(void)
{
	struct lost_claim *list, *l, *keep = NULL;
	int rc = 0, e;

	pthread_mutex_lock(&lost_mu);
	list = lost_claims;
	lost_claims = NULL;
	pthread_mutex_unlock(&lost_mu);
	while ((l = list)) {
		list = l->next;
		/* A name this node made since (a retry) is its own by now: nothing to give. */
		e = l->type == 't' && tfs_table_find(l->name) ? 0 : stale_claim(l->name, l->type, 1);
		if (e < 0) {
			rc = e;
			l->next = keep;
			keep = l;
			continue;
		}
		if (e == 1)
			tfs_log(LOG_NOTICE, "/%s: a claim whose answer was lost, given back", l->name);
		free(l->name);
		free(l);
	}
	if (keep) {
		pthread_mutex_lock(&lost_mu);
		for (l = keep; l->next; l = l->next)
			;
		l->next = lost_claims;
		lost_claims = keep;
		pthread_mutex_unlock(&lost_mu);
	}
	return rc;
}

int tfs_store_link_send(const char *name, char type, const struct tfs_dirrec *parent_rec,
		      struct tfs_store_claim **claim)
{
	char parent[TFS_PATH_MAX], key[TFS_KEYMAX], dkey[TFS_KEYMAX], t[2] = { type, 0 };
	const char *base;
	struct tfs_dirrec d;
	struct tfs_store_claim *c;
	int rc;

	if ((rc = tfs_name_check_len(name, TFS_PATH_MAX - 1)))
		return rc;         /* FUSE passes names up to 1024 bytes; NAME_MAX is 255 */
	tfs_split(name, parent, sizeof(parent), &base);
	if ((rc = tfs_key(key, sizeof(key), "dirents", parent)))
		return rc;
	/* The parent's record (usually cached) says it exists. The claim goes through the
	 * write-behind connection, not a script: Redis 7.0 does not apply NOLOOP to writes a
	 * script makes, and each claim would then drop this node's cached directory. So
	 * that another node's rmdir cannot leave the name in no directory, the parent's
	 * record is checked again right behind the claim, in the same round trip: rmdir is
	 * one script (tfs_store_rmdir) that refuses a directory with entries, so either it
	 * ran before the claim and the record is gone (the claim is undone), or it sees the
	 * entry and refuses. */
	if (!parent_rec && (rc = tfs_store_dir(parent, &d)))
		return rc;
	if ((rc = tfs_key(dkey, sizeof(dkey), "dir", parent)))
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->set = tfs_writer_sendf(&rc, "HSETNX %s %s %s", key, base, t);
	if (c->set)
		c->exists = tfs_writer_sendf(&rc, "EXISTS %s", dkey);
	if (!c->set || !c->exists) {
		int err = rc;

		/* The check could not be queued: the claim, if it took the name, gives it back. */
		if (c->set) {
			redisReply *r = tfs_writer_wait(c->set, &rc);

			if (r && r->type == REDIS_REPLY_INTEGER && r->integer == 1)
				tfs_store_unlink(name);
			freeReplyObject(r);
		}
		free(c);
		return err == -ENOMEM ? err : -EIO;
	}
	*claim = c;
	return 0;
}

int tfs_store_link_wait(const char *name, char type, struct tfs_store_claim *claim)
{
	char parent[TFS_PATH_MAX];
	const char *base;
	redisReply *r, *e;
	int rc, rc2;

	r = tfs_writer_wait(claim->set, &rc);
	e = tfs_writer_wait(claim->exists, &rc2);
	free(claim);
	if (!r) {
		freeReplyObject(e);
		if (rc != -ENOMEM && rc != -EPROTO)
			lost_claim_add(name, type);   /* sent: it may yet take the name */
		return rc == -ENOMEM ? rc : -EIO;
	}
	rc = r->type != REDIS_REPLY_INTEGER ? -EIO : r->integer == 1 ? 0 : -EEXIST;
	freeReplyObject(r);
	/* Taken by this node's own earlier claim whose answer was lost: a retry, ours. */
	if (rc == -EEXIST && lost_claim_take(name, type)) {
		int st = stale_claim(name, type, 0);

		if (st == 1)
			rc = 0;
		else if (st < 0)
			lost_claim_add(name, type);
	}
	tfs_split(name, parent, sizeof(parent), &base);
	if (rc == 0 && (!e || e->type != REDIS_REPLY_INTEGER || e->integer == 0)) {
		/* The parent went just before the claim (or its check failed): give the name
		 * back, which also removes the entries hash the claim made anew. */
		tfs_store_unlink(name);
		rc = e && e->type == REDIS_REPLY_INTEGER ? -ENOENT : -EIO;
		tfs_dircache_forget(parent);
	}
	freeReplyObject(e);
	if (rc == 0)
		tfs_dircache_set_type(parent, base, type);
	return rc;
}

int tfs_store_link(const char *name, char type)
{
	struct tfs_store_claim *claim;
	int rc = tfs_store_link_send(name, type, NULL, &claim);

	return rc ? rc : tfs_store_link_wait(name, type, claim);
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
		r = tfs_conn_cmdf(&rc, "HGET %s %s", key, base);
		if (!r)
			return -EIO;
		rc = entry_type(r);
		freeReplyObject(r);
		return rc;
	}
	/* The whole directory at once: the next lookups of names in it, present or not
	 * (a create looks its new name up first), need no round trip. */
	gen = tfs_dircache_gen();
	r = tfs_conn_cmdf(&rc, "HGETALL %s", key);
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

char *tfs_path_join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *p = malloc(dl + nl + 2);

	if (!p)
		return NULL;
	memcpy(p, dir, dl);
	if (dl)
		p[dl++] = '/';
	memcpy(p + dl, name, nl + 1);
	return p;
}

/* cmd (HGETALL, HKEYS) of key, whose reply must be an array: 0 with *out, or -EIO. */
static int read_array(const char *cmd, const char *key, redisReply **out)
{
	redisReply *r;
	int rc;

	r = tfs_conn_cmdf(&rc, "%s %s", cmd, key);
	if (!r)
		return -EIO;
	if (r->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		return -EIO;
	}
	*out = r;
	return 0;
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
	return read_array("HGETALL", key, out);
}

static int del_keys(const char *kind1, const char *kind2, const char *name)
{
	char k1[TFS_KEYMAX], k2[TFS_KEYMAX];
	redisReply *r;
	int rc;

	if (tfs_key(k1, sizeof(k1), kind1, name) || tfs_key(k2, sizeof(k2), kind2, name))
		return -ENAMETOOLONG;
	r = tfs_conn_cmdf(&rc, "DEL %s %s", k1, k2);
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
		r = tfs_conn_cmdf(&rc, "EVAL %s 3 %s %s %s %s", rmdir_lua, k1, k2, k3, base);
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
	r = tfs_conn_cmdf(&rc, "EXISTS %s", k1);
	if (!r)
		return -EIO;
	rc = r->integer ? 1 : 0;
	freeReplyObject(r);
	if (!rc)
		return 0;
	r = tfs_conn_cmdf(&rc, "RENAME %s %s", k1, k2);
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
	r = tfs_conn_cmdf(&rc, "HGETALL %s", key);
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
	tfs_mirror_move_tree(tfs_d.o.prefix, from, to);
	return tfs_store_unlink(from);
}

int tfs_key(char *buf, size_t size, const char *kind, const char *name)
{
	int n = snprintf(buf, size, "%s:%s:%s", tfs_d.o.prefix, kind, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

void tfs_split(const char *name, char *parent, size_t psize, const char **base)
{
	const char *slash = strrchr(name, '/');
	int n = slash ? (int)(slash - name) : 0;

	*base = slash ? slash + 1 : name;
	snprintf(parent, psize, "%.*s", n, name);
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

int tfs_store_unlinked_key(char *buf, size_t size, uint64_t seq)
{
	int n = snprintf(buf, size, "%s:unlinked:%s:%llu", tfs_d.o.prefix, tfs_d.o.node,
			 (unsigned long long)seq);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static void holder_field(char *buf, size_t size, const char *node, int64_t pid)
{
	snprintf(buf, size, "holder:%s:%lld", node, (long long)pid);
}

int tfs_store_holder_save(const char *key, const char *node, int64_t pid, int64_t uid,
			  int64_t count, int64_t refcount)
{
	char field[TFS_NODE_MAX + 32], n[48], rc[24];

	holder_field(field, sizeof(field), node, pid);
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

	holder_field(field, sizeof(field), node, pid);
	return tfs_writer_cmdf("HDEL %s %s", key, field);
}

/* --- the user's own attributes: field x:<name> of a record (xattr.c) --- */

int tfs_store_user_get(const char *key, const char *name, redisReply **out)
{
	char field[300];
	redisReply *r;
	int rc;

	*out = NULL;
	if ((rc = user_field(field, sizeof(field), name)))
		return rc;
	r = tfs_conn_cmdf(&rc, "HGET %s %s", key, field);
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

int tfs_store_user_set(const char *key, const char *name, const char *value, size_t size,
		       int create, int replace)
{
	char field[300];
	redisReply *r;
	int rc;

	if ((rc = user_field(field, sizeof(field), name)))
		return rc;
	if (replace)
		r = tfs_conn_cmdf(&rc, "EVAL %s 1 %s %s %b", replace_lua, key, field, value, size);
	else
		r = tfs_conn_cmdf(&rc, create ? "HSETNX %s %s %b" : "HSET %s %s %b", key, field,
				  value, size);
	if (!r)
		return -EIO;
	rc = r->type != REDIS_REPLY_INTEGER ? -EIO :
	     replace && r->integer == 0 ? -ENODATA : create && r->integer == 0 ? -EEXIST : 0;
	freeReplyObject(r);
	if (rc == 0)
		tfs_mirror_attr_set(key, name, value, size);
	return rc;
}

int tfs_store_user_list(const char *key, redisReply **out)
{
	*out = NULL;
	return read_array("HKEYS", key, out);
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

	if ((rc = user_field(field, sizeof(field), name)))
		return rc;
	r = tfs_conn_cmdf(&rc, "HDEL %s %s", key, field);
	if (!r)
		return -EIO;
	rc = r->type == REDIS_REPLY_INTEGER && r->integer ? 0 : -ENODATA;
	freeReplyObject(r);
	tfs_mirror_attr_drop(key, name);
	return rc;
}

/* --- the lifecycle queue (queue.c) --- */

void tfs_store_node_queue(char *buf, size_t size, const char *node)
{
	snprintf(buf, size, "{%s}:node:%s", tfs_d.o.queue, node);
}

redisReply *tfs_store_queue_rpop(int *rc, const char *list, int count)
{
	return tfs_conn_cmdf_unordered(rc, "RPOP %s %d", list, count);
}

int tfs_store_has_blmpop(void)
{
	redisReply *r;
	int rc, unknown;

	r = tfs_conn_cmdf_unordered(&rc, "COMMAND INFO BLMPOP");
	if (!r)
		return 1;
	unknown = r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
		  r->element[0]->type == REDIS_REPLY_NIL;
	freeReplyObject(r);
	return !unknown;
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
		if (strcmp(a->str, "node") == 0 && strcmp(b->str, tfs_d.o.node) == 0)
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

/* One SCAN pass over pattern: each record of this node goes to fn; those fn refuses go. */
static int walk(const char *pattern, int linked,
		int (*fn)(struct tfs_store_rec *rec, void *arg), void *arg, int *removed)
{
	size_t plen = strlen(tfs_d.o.prefix) + strlen(":tensor:");
	char cursor[32] = "0", parent[TFS_PATH_MAX], dk[TFS_KEYMAX];
	const char *base;
	int rc;

	do {
		redisReply *r = tfs_conn_cmdf(&rc, "SCAN %s MATCH %s COUNT 1000", cursor, pattern);
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
			redisReply *h = tfs_conn_cmdf(&rc, "HGETALL %s", key);
			int e;

			if (!h && rc != -EPROTO) {
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
			freeReplyObject(h);
			if (e == -ENOENT) {
				free(rec.holders);
				continue;    /* another node's */
			}
			if (e == 0)
				e = fn(&rec, arg);
			free(rec.holders);
			if (e == 0)
				continue;
			freeReplyObject(tfs_conn_cmdf(&rc, "DEL %s", key));
			if (linked) {
				tfs_split(key + plen, parent, sizeof(parent), &base);
				if (tfs_key(dk, sizeof(dk), "dirents", parent) == 0)
					freeReplyObject(tfs_conn_cmdf(&rc, "HDEL %s %s", dk, base));
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

	snprintf(pattern, sizeof(pattern), "%s:tensor:*", tfs_d.o.prefix);
	if ((rc = walk(pattern, 1, fn, arg, &removed)))
		return rc;
	snprintf(pattern, sizeof(pattern), "%s:unlinked:%s:*", tfs_d.o.prefix, tfs_d.o.node);
	if ((rc = walk(pattern, 0, fn, arg, &removed)))
		return rc;
	if (removed)
		tfs_log(LOG_NOTICE, "removed %d record(s) of node %s whose memory is gone",
			removed, tfs_d.o.node);
	return 0;
}

/* --- change notifications: the subscriber (dircache.c) and tracking (writer.c) --- */

int tfs_store_subscribe(redisContext *c, uint64_t *id)
{
	redisReply *r = redisCommand(c, "CLIENT ID");

	if (!r || r->type != REDIS_REPLY_INTEGER) {
		freeReplyObject(r);
		return -EIO;
	}
	*id = (uint64_t)r->integer;
	freeReplyObject(r);
	r = redisCommand(c, "SUBSCRIBE __redis__:invalidate");
	if (!r || r->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		return -EIO;
	}
	freeReplyObject(r);
	return 0;
}

redisReply *tfs_store_tracking(redisContext *c, uint64_t redirect)
{
	/* NOLOOP: this node's own writes (all of them through this connection but a few
	 * rare ones) are not reported back to it. */
	if (!redirect)
		return redisCommand(c, "CLIENT TRACKING off");
	return redisCommand(c, "CLIENT TRACKING on REDIRECT %llu BCAST PREFIX %s:dir: "
			    "PREFIX %s:dirents: PREFIX %s:tensor: NOLOOP",
			    (unsigned long long)redirect, tfs_d.o.prefix, tfs_d.o.prefix,
			    tfs_d.o.prefix);
}

/* A queue reply goes onto a list, or onto a key that does not exist (made a list that
 * expires); never onto a key of another type. A list that had no expiry (a user's own)
 * gets none. One script, so that nothing changes the key's type in between. */
static const char reply_lua[] =
	"local t = redis.call('TYPE', KEYS[1]).ok "
	"if t ~= 'none' and t ~= 'list' then return 0 end "
	"local ttl = redis.call('TTL', KEYS[1]) "
	"redis.call('LPUSH', KEYS[1], ARGV[1]) "
	"if t == 'none' or ttl > 0 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end "
	"return 1";

/* After <queue>:u:, the rest of a per-user reply key: <uid>:reply:<something>. */
static int queue_user_reply_key(const char *rest)
{
	const char *p = rest;

	while (*p >= '0' && *p <= '9')
		p++;
	return p > rest && strncmp(p, ":reply:", 7) == 0 && p[7] != '\0';
}

int tfs_store_reply_key_ok(const char *key)
{
	size_t pl = strlen(tfs_d.o.prefix), ql = strlen(tfs_d.o.queue);

	if (!*key)
		return 0;
	/* The daemon's own keys and the queues are never reply keys. */
	if (strncmp(key, tfs_d.o.prefix, pl) == 0 && key[pl] == ':')
		return 0;
	if (strcmp(key, tfs_d.o.queue) == 0)
		return 0;
	if (key[0] == '{' && strncmp(key + 1, tfs_d.o.queue, ql) == 0 && key[ql + 1] == '}')
		return 0;
	/* Under the per-user lists only their reply keys: never a user's queue itself. */
	if (strncmp(key, tfs_d.o.queue, ql) == 0 && strncmp(key + ql, ":u:", 3) == 0)
		return queue_user_reply_key(key + ql + 3);
	return 1;
}

int tfs_store_queue_reply(const char *key, const char *json, int ttl)
{
	char t[16];

	if (!tfs_store_reply_key_ok(key))
		return -EPERM;
	snprintf(t, sizeof(t), "%d", ttl);
	return tfs_writer_cmdf("EVAL %s 1 %s %s %s", reply_lua, key, json, t);
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

/* --- per-user queues (queue_users.c, queue.c) --- */

void tfs_store_queue_user_list(char *buf, size_t size, uid_t uid)
{
	snprintf(buf, size, "%s:u:%u", tfs_d.o.queue, (unsigned)uid);
}

void tfs_store_queue_acl_name(char *buf, size_t size, uid_t uid)
{
	snprintf(buf, size, "u%u.%s", (unsigned)uid, tfs_d.o.queue);
}

int tfs_store_reply_key_for(const char *key, uid_t uid)
{
	char list[600];
	size_t n;

	tfs_store_queue_user_list(list, sizeof(list), uid);
	n = strlen(list);
	return strncmp(key, list, n) == 0 && strncmp(key + n, ":reply:", 7) == 0 &&
	       key[n + 7] != '\0' && tfs_store_reply_key_ok(key);
}

int tfs_store_queue_acl(uid_t uid, const char *password)
{
	char name[600], list[600], keys[700], replies[700], pass[128];
	redisReply *r;
	int rc;

	tfs_store_queue_acl_name(name, sizeof(name), uid);
	tfs_store_queue_user_list(list, sizeof(list), uid);
	snprintf(keys, sizeof(keys), "~%s", list);
	snprintf(replies, sizeof(replies), "~%s:reply:*", list);
	snprintf(pass, sizeof(pass), ">%s", password);
	/* Rules reset first (wider ones someone added go), passwords added: daemons of other
	 * nodes serving the same list keep theirs; each takes its own back at unmount. Only
	 * what a queue client needs: push commands, pop replies, connect, ask who it is. */
	r = tfs_conn_cmdf(&rc, "ACL SETUSER %s on resetkeys resetchannels %s %s %s -@all +lpush "
			  "+rpush +brpop "
			  "+blpop +rpop +lpop +llen +lrange +del +exists +ping +echo +hello "
			  "+auth +select +acl|whoami +client|setname +client|id "
			  "+quit +reset", name, pass, keys, replies);
	if (!r)
		return rc == -EPROTO ? -EACCES : rc;
	rc = r->type == REDIS_REPLY_STATUS ? 0 : -EIO;
	freeReplyObject(r);
	return rc;
}

/* The lists the queue worker pops, in the order Redis tries them: the shared queue, this
 * node's forwarded commands, then the per-user lists, starting one further each time:
 * Redis pops the first list that has something, and one user's flood must not starve
 * the others. argv from index first. */
static int pop_keys(const char **argv, int first, char (*lists)[600], int max)
{
	static size_t turn;          /* the queue thread's only */
	size_t users = tfs_qusers_count();
	int n = 0;

	argv[first + n++] = tfs_d.o.queue;
	argv[first + n++] = tfs_d.node_queue;
	turn++;
	for (size_t i = 0; i < users && n < max; i++) {
		const struct tfs_quser *u = tfs_qusers_at((turn + i) % users);

		snprintf(lists[i], 600, "%s", u->list);
		argv[first + n++] = lists[i];
	}
	return n;
}

redisReply *tfs_store_queue_pop_all(int *rc, int count, int lmpop)
{
	enum { MAXK = 260 };
	static char lists[MAXK][600];        /* the queue thread's only */
	const char *argv[MAXK + 8];
	char nk[16], cnt[16];
	redisReply *r;
	char *cmd = NULL;
	long long len;
	int n, argc;

	if (lmpop) {
		argv[0] = "BLMPOP";
		argv[1] = "0.5";
		n = pop_keys(argv, 3, lists, MAXK);
		snprintf(nk, sizeof(nk), "%d", n);
		argv[2] = nk;
		snprintf(cnt, sizeof(cnt), "%d", count);
		argv[3 + n] = "RIGHT";
		argv[4 + n] = "COUNT";
		argv[5 + n] = cnt;
		argc = 6 + n;
	} else {
		argv[0] = "BRPOP";
		n = pop_keys(argv, 1, lists, MAXK);
		argv[1 + n] = "0.5";
		argc = 2 + n;
	}
	len = redisFormatCommandArgv(&cmd, argc, argv, NULL);
	if (len < 0) {
		*rc = -ENOMEM;
		return NULL;
	}
	r = tfs_conn_run(rc, cmd, (size_t)len);
	redisFreeCommand(cmd);
	return r;
}

/* --- the live-node registry and node lease (lease.c, queue.c) --- */

void tfs_store_alive_key(char *buf, size_t size, const char *node)
{
	snprintf(buf, size, "%s:alive:%s", tfs_d.o.prefix, node);
}

/* The lease is the registry key itself, "<token> <pid> <host>": taken when free or when
 * its token is ours (a restarted daemon takes over its predecessor's), never another's.
 * 2: taken while free; 1: ours, renewed; else the holder's value. */
static const char lease_take_lua[] =
	"local v = redis.call('GET', KEYS[1]) "
	"if v and string.sub(v, 1, #ARGV[1] + 1) ~= ARGV[1] .. ' ' then return v end "
	"redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. ARGV[2], 'PX', ARGV[3]) "
	"if v then return 1 end "
	"return 2";

static const char lease_drop_lua[] =
	"local v = redis.call('GET', KEYS[1]) "
	"if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. ' ' then "
	"return redis.call('DEL', KEYS[1]) end "
	"return 0";

int tfs_store_lease_take(redisContext *c, const char *token, const char *who, int ttl_ms,
			 char *holder, size_t hsize)
{
	char key[600], t[16];
	redisReply *r;
	int rc;

	tfs_store_alive_key(key, sizeof(key), tfs_d.o.node);
	snprintf(t, sizeof(t), "%d", ttl_ms);
	r = redisCommand(c, "EVAL %s 1 %s %s %s %s", lease_take_lua, key, token, who, t);
	if (!r)
		return -EIO;
	if (r->type == REDIS_REPLY_INTEGER && (r->integer == 1 || r->integer == 2))
		rc = r->integer == 2;
	else if (r->type == REDIS_REPLY_STRING) {
		snprintf(holder, hsize, "%.*s", (int)r->len, r->str);
		rc = -EBUSY;
	} else {
		snprintf(holder, hsize, "%.*s", r->type == REDIS_REPLY_ERROR ? (int)r->len : 0,
			 r->type == REDIS_REPLY_ERROR ? r->str : "");
		rc = -EPROTO;
	}
	freeReplyObject(r);
	return rc;
}

/* Compare and set: the lease goes to token only while it still holds exactly old. */
static const char lease_steal_lua[] =
	"if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end "
	"redis.call('SET', KEYS[1], ARGV[2] .. ' ' .. ARGV[3], 'PX', ARGV[4]) "
	"return 1";

int tfs_store_lease_steal(redisContext *c, const char *old, const char *token, const char *who,
			  int ttl_ms)
{
	char key[600], t[16];
	redisReply *r;
	int rc;

	tfs_store_alive_key(key, sizeof(key), tfs_d.o.node);
	snprintf(t, sizeof(t), "%d", ttl_ms);
	r = redisCommand(c, "EVAL %s 1 %s %s %s %s %s", lease_steal_lua, key, old, token, who, t);
	if (!r)
		return -EIO;
	rc = r->type == REDIS_REPLY_INTEGER ? (r->integer == 1 ? 0 : -EBUSY) : -EPROTO;
	freeReplyObject(r);
	return rc;
}

int tfs_store_lease_drop(redisContext *c, const char *token)
{
	char key[600];
	redisReply *r;
	int rc;

	tfs_store_alive_key(key, sizeof(key), tfs_d.o.node);
	r = redisCommand(c, "EVAL %s 1 %s %s", lease_drop_lua, key, token);
	if (!r)
		return -EIO;
	rc = r->type == REDIS_REPLY_INTEGER ? (int)r->integer : -EPROTO;
	freeReplyObject(r);
	return rc;
}

/* The push and the check of the owner's registry key in one step: a command never lands
 * on the list of a node that is not there to pop it. The list expires when nobody pops it
 * (its node died after the push). */
static const char forward_lua[] =
	"if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end "
	"redis.call('LPUSH', KEYS[2], ARGV[1]) "
	"redis.call('EXPIRE', KEYS[2], ARGV[2]) "
	"return 1";

int tfs_store_queue_forward_live(const char *node, const char *json, size_t len, int ttl)
{
	char alive[600], list[600], t[16];
	redisReply *r;
	int rc;

	tfs_store_alive_key(alive, sizeof(alive), node);
	tfs_store_node_queue(list, sizeof(list), node);
	snprintf(t, sizeof(t), "%d", ttl);
	r = tfs_conn_cmdf(&rc, "EVAL %s 2 %s %s %b %s", forward_lua, alive, list, json, len, t);
	if (!r)
		return rc == -EPROTO ? -EIO : rc;
	rc = r->type == REDIS_REPLY_INTEGER ? (r->integer ? 0 : -EHOSTDOWN) : -EIO;
	freeReplyObject(r);
	return rc;
}

int tfs_store_queue_acl_drop(uid_t uid, const char *password)
{
	char name[600], pass[128];
	redisReply *r;
	int rc;

	tfs_store_queue_acl_name(name, sizeof(name), uid);
	snprintf(pass, sizeof(pass), "<%s", password);
	/* Unordered: at unmount the writer has stopped. */
	r = tfs_conn_cmdf_unordered(&rc, "ACL SETUSER %s %s", name, pass);
	freeReplyObject(r);
	return r ? 0 : rc;
}
