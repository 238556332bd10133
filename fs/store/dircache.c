/* A cache of directory records and directory entries. The kernel asks for a directory's
 * attributes again after every entry made or removed in it, and each lookup asks whether
 * a name exists: without a cache those were most of the Redis round trips of a create ->
 * shape -> unlink, and with it a directory's GETATTR is answered without the namespace
 * lock (fuse/ops_file.c).
 *
 * Coherence comes from Redis client tracking (BCAST on the dir:, dirents: and tensor:
 * prefixes, redirected to the subscriber connection of this file): any change by anyone
 * (another node, redis-cli by hand) drops what is cached for that key, here and in the
 * kernel (kernel_cache.c). This node's own writes go
 * through the write-behind connection, which is tracked with NOLOOP, and update the cache
 * as they are queued. While tracking is not established (start-up, Redis away, a Redis
 * without tracking) nothing is cached and every question goes to Redis. A read that
 * raced an invalidation is not stored: the generation counter says so. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/dircache.h"
#include "kernel/kernel_cache.h"
#include "store/store.h"
#include "store/writer.h"
#include "log.h"
#include "store/schema.h"
#include "store/conn.h"
#include "util/hash.h"

#define DIRS_MAX 1024        /* cached directories; past it the cache starts over */
#define ENTS_MAX 4096        /* entries of one directory cached whole; bigger: per name */
#define ENT_BUCKETS 64
#define DIR_BUCKETS 256

struct dc_ent {
	char *base;
	char type;                   /* 't', 'd' */
	struct dc_ent *next;
};

struct dc_dir {
	char *name;
	int have_rec;
	struct tfs_dirrec rec;
	int have_ents;               /* ents is the whole directory */
	int big;                     /* too many entries to hold: ask Redis per name */
	struct dc_ent *ents[ENT_BUCKETS];
	struct dc_dir *next;
};

static struct {
	pthread_mutex_t mu;
	int on;                      /* tracking established: the cache may be used */
	uint64_t gen;                /* bumped by every invalidation */
	struct dc_dir *dirs[DIR_BUCKETS];
	size_t ndirs;
	uint64_t sub_id;             /* CLIENT ID of the subscriber connection, 0: none */
	pthread_t thread;
	int started;
	volatile int stop;
} dc = { .mu = PTHREAD_MUTEX_INITIALIZER };

static uint64_t hash(const char *s)
{
	return tfs_hash_str(s);
}

static void ents_clear(struct dc_dir *d)
{
	for (int i = 0; i < ENT_BUCKETS; i++) {
		struct dc_ent *e, *next;
		for (e = d->ents[i]; e; e = next) {
			next = e->next;
			free(e->base);
			free(e);
		}
		d->ents[i] = NULL;
	}
	d->have_ents = 0;     /* d->big stays: a huge directory is not fetched again */
}

static void clear_all(void)
{
	struct dc_dir *d, *next;

	for (int i = 0; i < DIR_BUCKETS; i++) {
		for (d = dc.dirs[i]; d; d = next) {
			next = d->next;
			ents_clear(d);
			free(d->name);
			free(d);
		}
		dc.dirs[i] = NULL;
	}
	dc.ndirs = 0;
}

static struct dc_dir *find(const char *name, int add)
{
	size_t h = hash(name) % DIR_BUCKETS;
	struct dc_dir *d;

	for (d = dc.dirs[h]; d; d = d->next)
		if (strcmp(d->name, name) == 0)
			return d;
	if (!add)
		return NULL;
	if (dc.ndirs >= DIRS_MAX)
		clear_all();
	d = calloc(1, sizeof(*d));
	if (!d || !(d->name = strdup(name))) {
		free(d);
		return NULL;
	}
	d->next = dc.dirs[h];
	dc.dirs[h] = d;
	dc.ndirs++;
	return d;
}

static struct dc_ent *ent_find(struct dc_dir *d, const char *base)
{
	for (struct dc_ent *e = d->ents[hash(base) % ENT_BUCKETS]; e; e = e->next)
		if (strcmp(e->base, base) == 0)
			return e;
	return NULL;
}

static int ent_add(struct dc_dir *d, const char *base, size_t len, char type)
{
	struct dc_ent *e = calloc(1, sizeof(*e));
	size_t h;

	if (!e || !(e->base = strndup(base, len))) {
		free(e);
		return -ENOMEM;
	}
	e->type = type;
	h = hash(e->base) % ENT_BUCKETS;
	e->next = d->ents[h];
	d->ents[h] = e;
	return 0;
}

static void ent_del(struct dc_dir *d, const char *base)
{
	struct dc_ent **pp = &d->ents[hash(base) % ENT_BUCKETS], *e;

	for (; (e = *pp); pp = &e->next) {
		if (strcmp(e->base, base) == 0) {
			*pp = e->next;
			free(e->base);
			free(e);
			return;
		}
	}
}

uint64_t tfs_dircache_gen(void)
{
	uint64_t g;

	pthread_mutex_lock(&dc.mu);
	g = dc.on ? dc.gen : 0;
	pthread_mutex_unlock(&dc.mu);
	return g;
}

int tfs_dircache_get_dir(const char *name, struct tfs_dirrec *rec)
{
	struct dc_dir *d;
	int hit = 0;

	pthread_mutex_lock(&dc.mu);
	if (dc.on && (d = find(name, 0)) && d->have_rec) {
		*rec = d->rec;
		hit = 1;
	}
	pthread_mutex_unlock(&dc.mu);
	return hit;
}

void tfs_dircache_put_dir(const char *name, const struct tfs_dirrec *rec, uint64_t gen)
{
	struct dc_dir *d;

	pthread_mutex_lock(&dc.mu);
	if (dc.on && (gen == 0 || gen == dc.gen) && (d = find(name, 1))) {
		d->rec = *rec;
		d->have_rec = 1;
	}
	pthread_mutex_unlock(&dc.mu);
}

int tfs_dircache_get_type(const char *parent, const char *base, int *cacheable)
{
	struct dc_dir *d;
	struct dc_ent *e;
	int rc = 0;

	pthread_mutex_lock(&dc.mu);
	*cacheable = 0;
	if (dc.on) {
		d = find(parent, 0);
		*cacheable = !d || !d->big;
		if (d && d->have_ents) {
			e = ent_find(d, base);
			rc = e ? e->type : -ENOENT;
		}
	}
	pthread_mutex_unlock(&dc.mu);
	return rc;
}

void tfs_dircache_put_ents(const char *parent, const redisReply *r, uint64_t gen)
{
	struct dc_dir *d;

	pthread_mutex_lock(&dc.mu);
	if (!dc.on || gen != dc.gen || r->type != REDIS_REPLY_ARRAY || !(d = find(parent, 1)))
		goto out;
	ents_clear(d);
	d->big = r->elements / 2 > ENTS_MAX;
	if (d->big)
		goto out;
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		const redisReply *a = r->element[i], *b = r->element[i + 1];
		if (a->type != REDIS_REPLY_STRING || b->type != REDIS_REPLY_STRING ||
		    b->len != 1 || (b->str[0] != 't' && b->str[0] != 'd'))
			continue;     /* garbage is not cached: each lookup reports it */
		if (ent_add(d, a->str, a->len, b->str[0])) {
			ents_clear(d);
			goto out;
		}
	}
	d->have_ents = 1;
out:
	pthread_mutex_unlock(&dc.mu);
}

void tfs_dircache_set_type(const char *parent, const char *base, int type)
{
	struct dc_dir *d;
	struct dc_ent *e;

	pthread_mutex_lock(&dc.mu);
	if (!dc.on || !(d = find(parent, 0)) || !d->have_ents)
		goto out;
	e = ent_find(d, base);
	if (type == 0) {
		if (e)
			ent_del(d, base);
	} else if (e) {
		e->type = (char)type;
	} else if (ent_add(d, base, strlen(base), (char)type)) {
		ents_clear(d);
	}
out:
	pthread_mutex_unlock(&dc.mu);
}

void tfs_dircache_forget(const char *name)
{
	struct dc_dir *d;

	pthread_mutex_lock(&dc.mu);
	dc.gen++;
	if ((d = find(name, 0))) {
		d->have_rec = 0;
		ents_clear(d);
	}
	pthread_mutex_unlock(&dc.mu);
}

void tfs_dircache_forget_tree(const char *name)
{
	size_t n = strlen(name);

	pthread_mutex_lock(&dc.mu);
	dc.gen++;
	for (int i = 0; i < DIR_BUCKETS; i++) {
		for (struct dc_dir *d = dc.dirs[i]; d; d = d->next) {
			if (strncmp(d->name, name, n) || (d->name[n] && d->name[n] != '/'))
				continue;
			d->have_rec = 0;
			ents_clear(d);
		}
	}
	pthread_mutex_unlock(&dc.mu);
}

void tfs_dircache_tracking(int on)
{
	pthread_mutex_lock(&dc.mu);
	dc.on = on;
	dc.gen++;
	clear_all();
	pthread_mutex_unlock(&dc.mu);
	tfs_kcache_tracking(on);
}

uint64_t tfs_dircache_subscriber(void)
{
	return __atomic_load_n(&dc.sub_id, __ATOMIC_ACQUIRE);
}

/* One invalidation: the keys Redis names, or everything (nil: FLUSHALL and the like). */
static void invalidate(const redisReply *r)
{
	size_t plen = strlen(tfs_schema.prefix);
	const redisReply *keys;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element[0]->type != REDIS_REPLY_STRING || strcmp(r->element[0]->str, "message"))
		return;
	keys = r->element[2];
	if (keys->type != REDIS_REPLY_ARRAY) {
		pthread_mutex_lock(&dc.mu);
		dc.gen++;
		clear_all();
		pthread_mutex_unlock(&dc.mu);
		return;
	}
	for (size_t i = 0; i < keys->elements; i++) {
		const char *k = keys->element[i]->str;
		if (keys->element[i]->type != REDIS_REPLY_STRING || strncmp(k, tfs_schema.prefix, plen) ||
		    k[plen] != ':')
			continue;
		k += plen + 1;
		if (strncmp(k, "dir:", 4) == 0) {
			tfs_dircache_forget(k + 4);
			tfs_kcache_forget(k + 4);
		} else if (strncmp(k, "dirents:", 8) == 0) {
			tfs_dircache_forget(k + 8);
		} else if (strncmp(k, "tensor:", 7) == 0) {
			tfs_kcache_forget(k + 7);
		}
	}
}

/* On a fresh connection c: its client id, and c subscribed to the invalidations. */
static int subscribe_conn(redisContext *c, uint64_t *id)
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

/* Tracking of the daemon's keys on c, reported to client redirect; 0: tracking off.
 * The reply as redisCommand gives it. */
static redisReply *tracking(redisContext *c, uint64_t redirect)
{
	/* NOLOOP: this node's own writes (all of them through this connection but a few
	 * rare ones) are not reported back to it. */
	if (!redirect)
		return redisCommand(c, "CLIENT TRACKING off");
	return redisCommand(c, "CLIENT TRACKING on REDIRECT %llu BCAST PREFIX %s:dir: "
			    "PREFIX %s:dirents: PREFIX %s:tensor: NOLOOP",
			    (unsigned long long)redirect, tfs_schema.prefix, tfs_schema.prefix,
			    tfs_schema.prefix);
}

/* The subscriber id that the writer's connection's tracking redirects to: touched only
 * by the one sender on that connection (writer.c). */
static uint64_t tracked_sub;

/* The directory cache is valid only while Redis reports changes of dir records to the
 * subscriber: the writer's hook (re)enables tracking on the writer's connection c whenever
 * the subscriber or c is new. */
static int ensure_tracking(redisContext *c, void *arg)
{
	uint64_t sub = tfs_dircache_subscriber();
	redisReply *r;

	(void)arg;
	if (!sub || sub == tracked_sub)
		return 0;
	if (tracked_sub) {
		/* Redirected to a subscriber that is gone: options cannot be changed while on. */
		r = tracking(c, 0);
		if (!r)
			return -EIO;
		freeReplyObject(r);
	}
	r = tracking(c, sub);
	if (!r)
		return -EIO;
	if (r->type == REDIS_REPLY_ERROR) {
		/* Redis < 6: no tracking, so no directory cache; everything still works. */
		tfs_log(LOG_NOTICE, "Redis has no client tracking (%s): directory records "
			"are not cached", r->str);
		tracked_sub = sub;
	} else {
		tracked_sub = sub;
		tfs_dircache_tracking(1);
	}
	freeReplyObject(r);
	return 0;
}

/* Tracking lives on the writer's connection: the cache goes with it. */
static void tracking_closed(void *arg)
{
	(void)arg;
	tfs_dircache_tracking(0);
	tracked_sub = 0;
}

static const struct tfs_writer_hook tracking_hook = {
	.on_conn = ensure_tracking,
	.on_close = tracking_closed,
};

static redisContext *subscribe(void)
{
	char err[256];
	redisContext *c;
	uint64_t id;
	int rc;

	c = tfs_conn_open(1000, &rc, err, sizeof(err));
	if (!c)
		return NULL;
	if (subscribe_conn(c, &id)) {
		redisFree(c);
		return NULL;
	}
	__atomic_store_n(&dc.sub_id, id, __ATOMIC_RELEASE);
	tfs_writer_kick();           /* the writer turns tracking on for this id */
	return c;
}

static void *dc_main(void *arg)
{
	redisContext *c = NULL;
	redisReply *r;
	struct pollfd p;

	(void)arg;
	while (!dc.stop) {
		if (!c && !(c = subscribe())) {
			usleep(200000);
			continue;
		}
		p.fd = c->fd;
		p.events = POLLIN;
		if (poll(&p, 1, 200) <= 0)
			continue;
		if (redisBufferRead(c) != REDIS_OK) {
			/* Without the subscriber, changes go unseen: stop caching until back. */
			__atomic_store_n(&dc.sub_id, 0, __ATOMIC_RELEASE);
			tfs_dircache_tracking(0);
			redisFree(c);
			c = NULL;
			continue;
		}
		while (redisGetReplyFromReader(c, (void **)&r) == REDIS_OK && r) {
			invalidate(r);
			freeReplyObject(r);
		}
	}
	if (c)
		redisFree(c);
	return NULL;
}

int tfs_dircache_start(void)
{
	int rc;

	dc.stop = 0;
	tfs_writer_set_hook(&tracking_hook);
	rc = pthread_create(&dc.thread, NULL, dc_main, NULL);
	if (rc == 0)
		pthread_setname_np(dc.thread, "tfs-track");
	dc.started = rc == 0;
	return -rc;
}

void tfs_dircache_stop(void)
{
	if (!dc.started)
		return;
	dc.stop = 1;
	pthread_join(dc.thread, NULL);
	dc.started = 0;
	tfs_dircache_tracking(0);
}
