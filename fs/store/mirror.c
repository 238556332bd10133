/* The node's memory of its Redis records (mirror.h): a hash of entries by Redis key, each a
 * directory record and a list of user attributes. Small: one entry per directory this node
 * has seen and per record it set an attribute on. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/mirror.h"
#include "log.h"
#include "util/hash.h"

#define NBUCKETS 1024

struct entry {
	char *key;
	int has_dir;
	struct tfs_dirrec d;
	struct tfs_mirror_attr *attrs;
	int64_t owner;               /* whom attrs are charged to; -1: not known yet */
	uint64_t bytes;              /* attrs' names and values */
	struct entry *next;
};

/* The bytes of user attributes charged to one owner. */
struct usage {
	int64_t uid;
	uint64_t bytes;
	struct usage *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct entry *buckets[NBUCKETS];
static struct usage *owners[64];
static int complained;

static unsigned hash(const char *s)
{
	return (unsigned)(tfs_hash_str(s) % NBUCKETS);
}

static void oom(void)
{
	if (!complained++)
		tfs_log(LOG_ERR, "out of memory: some records may not survive a Redis restart");
}

static void oom(void);

/* Caller holds mu. The usage of uid, made when missing and make is set. */
static struct usage **usage_find(int64_t uid)
{
	struct usage **p = &owners[(uint64_t)uid % 64];

	while (*p && (*p)->uid != uid)
		p = &(*p)->next;
	return p;
}

/* Caller holds mu: uid's bytes move by n (a usage that falls to 0 goes). */
static void charge(int64_t uid, int64_t n)
{
	struct usage **p, *u;

	if (uid < 0 || n == 0)
		return;
	p = usage_find(uid);
	if (!*p) {
		if (n < 0)
			return;
		if (!(*p = calloc(1, sizeof(**p)))) {
			oom();
			return;
		}
		(*p)->uid = uid;
	}
	u = *p;
	u->bytes = n < 0 && (uint64_t)-n > u->bytes ? 0 : u->bytes + (uint64_t)n;
	if (!u->bytes) {
		*p = u->next;
		free(u);
	}
}

static uint64_t attr_cost(const char *name, size_t size)
{
	return strlen(name) + size;
}

/* Caller holds mu: e's attributes are charged to owner from now on. */
static void set_owner(struct entry *e, int64_t owner)
{
	if (owner < 0 || owner == e->owner)
		return;
	charge(e->owner, -(int64_t)e->bytes);
	charge(owner, (int64_t)e->bytes);
	e->owner = owner;
}

/* Caller holds mu: e's attributes are charged to no one any more. */
static void uncharge(struct entry *e)
{
	charge(e->owner, -(int64_t)e->bytes);
	e->bytes = 0;
}

static void attrs_free(struct tfs_mirror_attr *a)
{
	struct tfs_mirror_attr *next;

	for (; a; a = next) {
		next = a->next;
		free(a->name);
		free(a->value);
		free(a);
	}
}

/* Caller holds mu. */
static struct entry **find(const char *key)
{
	struct entry **p = &buckets[hash(key)];

	while (*p && strcmp((*p)->key, key))
		p = &(*p)->next;
	return p;
}

/* The entry of key, made when missing (NULL: out of memory). Caller holds mu. */
static struct entry *get(const char *key)
{
	struct entry **p = find(key), *e;

	if (*p)
		return *p;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->key = strdup(key))) {
		free(e);
		oom();
		return NULL;
	}
	e->owner = -1;
	*p = e;
	return e;
}

/* Unlinks *p and frees it when it holds nothing. Caller holds mu. */
static void drop_if_empty(struct entry **p)
{
	struct entry *e = *p;

	if (!e || e->has_dir || e->attrs)
		return;
	*p = e->next;
	free(e->key);
	free(e);
}

void tfs_mirror_dir_put(const char *key, const struct tfs_dirrec *d)
{
	struct entry *e;

	pthread_mutex_lock(&mu);
	if ((e = get(key))) {
		e->d = *d;
		e->has_dir = 1;
		set_owner(e, d->uid);
	}
	pthread_mutex_unlock(&mu);
}

int tfs_mirror_dir_get(const char *key, struct tfs_dirrec *d)
{
	struct entry *e;
	int found = 0;

	pthread_mutex_lock(&mu);
	e = *find(key);
	if (e && e->has_dir) {
		*d = e->d;
		found = 1;
	}
	pthread_mutex_unlock(&mu);
	return found;
}

void tfs_mirror_attr_set(const char *key, int64_t owner, const char *name, const char *value,
			 size_t size)
{
	struct tfs_mirror_attr *a;
	struct entry *e;
	char *v;

	pthread_mutex_lock(&mu);
	if (!(e = get(key)))
		goto out;
	set_owner(e, owner);
	v = malloc(size ? size : 1);
	if (!v) {
		oom();
		goto out;
	}
	memcpy(v, value, size);
	for (a = e->attrs; a && strcmp(a->name, name); a = a->next)
		;
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a || !(a->name = strdup(name))) {
			free(a);
			free(v);
			oom();
			goto out;
		}
		a->next = e->attrs;
		e->attrs = a;
	}
	if (a->value) {
		e->bytes -= attr_cost(a->name, a->size);
		charge(e->owner, -(int64_t)attr_cost(a->name, a->size));
	}
	free(a->value);
	a->value = v;
	a->size = size;
	e->bytes += attr_cost(name, size);
	charge(e->owner, (int64_t)attr_cost(name, size));
out:
	pthread_mutex_unlock(&mu);
}

int tfs_mirror_attr_check(const char *key, int64_t owner, const char *name, size_t size,
			  uint64_t file_max, uint64_t user_max)
{
	const struct tfs_mirror_attr *a = NULL;
	uint64_t file = 0, user = 0, old = 0, add = attr_cost(name, size);
	struct entry *e;
	struct usage *u;
	int rc = 0;

	pthread_mutex_lock(&mu);
	if ((e = *find(key))) {
		for (a = e->attrs; a && strcmp(a->name, name); a = a->next)
			;
		old = a ? attr_cost(a->name, a->size) : 0;
		file = e->bytes;
	}
	if (owner >= 0 && (u = *usage_find(owner)))
		user = u->bytes;
	/* Only growth is refused: a smaller value or a removal always goes through. */
	if (add > old && file - old + add > file_max)
		rc = -ENOSPC;
	else if (add > old && owner > 0 && user - old + add > user_max)
		rc = -EDQUOT;
	pthread_mutex_unlock(&mu);
	return rc;
}

void tfs_mirror_owner(const char *key, int64_t owner)
{
	struct entry *e;

	pthread_mutex_lock(&mu);
	if ((e = *find(key)))
		set_owner(e, owner);
	pthread_mutex_unlock(&mu);
}

void tfs_mirror_attr_drop(const char *key, const char *name)
{
	struct tfs_mirror_attr **a, *x;
	struct entry **p;

	pthread_mutex_lock(&mu);
	p = find(key);
	if (*p) {
		for (a = &(*p)->attrs; *a && strcmp((*a)->name, name); a = &(*a)->next)
			;
		if ((x = *a)) {
			*a = x->next;
			x->next = NULL;
			(*p)->bytes -= attr_cost(x->name, x->size);
			charge((*p)->owner, -(int64_t)attr_cost(x->name, x->size));
			attrs_free(x);
		}
		drop_if_empty(p);
	}
	pthread_mutex_unlock(&mu);
}

void tfs_mirror_forget(const char *key)
{
	struct entry **p;

	pthread_mutex_lock(&mu);
	p = find(key);
	if (*p) {
		uncharge(*p);
		attrs_free((*p)->attrs);
		(*p)->attrs = NULL;
		(*p)->has_dir = 0;
		drop_if_empty(p);
	}
	pthread_mutex_unlock(&mu);
}

/* Moves entry e (unlinked from its bucket) to key to, replacing what to held. Caller
 * holds mu; e's old key is freed. */
static void rekey(struct entry *e, char *to)
{
	struct entry **p = find(to);

	if (*p) {
		struct entry *old = *p;

		*p = old->next;
		uncharge(old);
		attrs_free(old->attrs);
		free(old->key);
		free(old);
	}
	free(e->key);
	e->key = to;
	p = &buckets[hash(to)];
	e->next = *p;
	*p = e;
}

void tfs_mirror_rename(const char *from_key, const char *to_key)
{
	struct entry **p, *e;
	char *to;

	pthread_mutex_lock(&mu);
	p = find(from_key);
	if ((e = *p)) {
		*p = e->next;
		if ((to = strdup(to_key))) {
			rekey(e, to);
		} else {
			uncharge(e);
			attrs_free(e->attrs);
			free(e->key);
			free(e);
			oom();
		}
	}
	pthread_mutex_unlock(&mu);
}

/* The length of <prefix>:<kind>: that key starts with, for the kinds a tree move moves;
 * 0 for others. */
static size_t kind_len(const char *key, const char *prefix)
{
	static const char *const kinds[] = { "dir", "dirents", "tensor" };
	size_t pl = strlen(prefix);

	if (strncmp(key, prefix, pl) || key[pl] != ':')
		return 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t kl = strlen(kinds[i]);

		if (strncmp(key + pl + 1, kinds[i], kl) == 0 && key[pl + 1 + kl] == ':')
			return pl + kl + 2;
	}
	return 0;
}

void tfs_mirror_move_tree(const char *prefix, const char *from, const char *to)
{
	struct entry *moved = NULL, *e, **p;
	size_t fl = strlen(from), tl = strlen(to);

	pthread_mutex_lock(&mu);
	/* Take the moved entries out first, so that one moved onto a key still to be visited
	 * is not moved twice. */
	for (int b = 0; b < NBUCKETS; b++) {
		for (p = &buckets[b]; (e = *p);) {
			size_t k = kind_len(e->key, prefix);
			const char *name = e->key + k;

			if (k && strncmp(name, from, fl) == 0 &&
			    (name[fl] == '\0' || name[fl] == '/')) {
				*p = e->next;
				e->next = moved;
				moved = e;
			} else {
				p = &e->next;
			}
		}
	}
	while ((e = moved)) {
		size_t k = kind_len(e->key, prefix), rest = strlen(e->key + k + fl);
		char *nk = malloc(k + tl + rest + 1);

		moved = e->next;
		if (!nk) {
			uncharge(e);
			attrs_free(e->attrs);
			free(e->key);
			free(e);
			oom();
			continue;
		}
		memcpy(nk, e->key, k);
		memcpy(nk + k, to, tl);
		memcpy(nk + k + tl, e->key + k + fl, rest + 1);
		rekey(e, nk);
	}
	pthread_mutex_unlock(&mu);
}

static struct tfs_mirror_attr *attrs_copy(const struct tfs_mirror_attr *a, int *err)
{
	struct tfs_mirror_attr *head = NULL, **tail = &head, *c;

	for (; a; a = a->next) {
		c = calloc(1, sizeof(*c));
		if (c) {
			c->name = strdup(a->name);
			c->value = malloc(a->size ? a->size : 1);
		}
		if (!c || !c->name || !c->value) {
			if (c) {
				free(c->name);
				free(c->value);
			}
			free(c);
			*err = -ENOMEM;
			return head;
		}
		memcpy(c->value, a->value, a->size);
		c->size = a->size;
		*tail = c;
		tail = &c->next;
	}
	return head;
}

int tfs_mirror_snapshot(const char *prefix, int exact, struct tfs_mirror_item **out)
{
	struct tfs_mirror_item *items = NULL, *grown;
	size_t pl = strlen(prefix);
	int n = 0, cap = 0, err = 0;

	*out = NULL;
	pthread_mutex_lock(&mu);
	/* One key: its own bucket only. */
	for (int b = exact ? (int)hash(prefix) : 0; b < NBUCKETS && !err; b = exact ? NBUCKETS : b + 1) {
		for (struct entry *e = buckets[b]; e && !err; e = e->next) {
			if (exact ? strcmp(e->key, prefix) : strncmp(e->key, prefix, pl))
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				grown = realloc(items, cap * sizeof(*items));
				if (!grown) {
					err = -ENOMEM;
					break;
				}
				items = grown;
			}
			memset(&items[n], 0, sizeof(items[n]));
			items[n].key = strdup(e->key);
			items[n].has_dir = e->has_dir;
			items[n].d = e->d;
			items[n].attrs = attrs_copy(e->attrs, &err);
			n++;
			if (!items[n - 1].key)
				err = -ENOMEM;
		}
	}
	pthread_mutex_unlock(&mu);
	if (err) {
		tfs_mirror_snapshot_free(items, n);
		return err;
	}
	*out = items;
	return n;
}

void tfs_mirror_snapshot_free(struct tfs_mirror_item *items, int n)
{
	for (int i = 0; i < n; i++) {
		free(items[i].key);
		attrs_free(items[i].attrs);
	}
	free(items);
}
