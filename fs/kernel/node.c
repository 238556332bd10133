/* The kernel's node ids: see node.h. */
#include <errno.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/node.h"
#include "strutil.h"
#include "util/hash.h"

#define NAME_MAX_BYTES 255

struct node {
	uint64_t id;
	uint64_t nlookup;            /* the kernel's references */
	size_t nchild;               /* attached children: they need this node for paths */
	struct node *parent;         /* NULL for the root and detached nodes */
	char *name;                  /* in parent; NULL for the root */
	char *ukey;                  /* detached: the unlinked tensor's key, or NULL */
	int pinned;                  /* ukey's tensor keeps the kernel's reference until
	                                this node goes (tfs_node_detach_pinned) */
	struct node *id_next;        /* chain by id */
	struct node *ent_next;       /* chain by (parent, name), attached nodes only */
};

/* The key of a pinned node's tensor, once the node went: tfs_node_take_unpinned. */
struct unpinned {
	struct unpinned *next;
	char *key;
};

static struct {
	pthread_mutex_t mu;
	struct node **by_id, **by_ent;
	size_t nbuckets, count;
	struct node root;
	struct unpinned *unpinned;   /* LIFO: the order does not matter */
	int nunpinned;               /* read without mu as a hint */
} nt = { .mu = PTHREAD_MUTEX_INITIALIZER };

uint64_t tfs_node_id_of(const char *path)
{
	uint64_t h = tfs_fnv1a(TFS_FNV_BASIS, path, strlen(path));

	return h <= TFS_ROOT_ID ? h + 2 : h;
}

static size_t ent_hash(const struct node *parent, const char *name)
{
	return (size_t)tfs_hash_with((uint64_t)(uintptr_t)parent, name, strlen(name));
}

/* Ids come from records and paths others choose: hashed too, never used as they are. */
static size_t id_hash(uint64_t id)
{
	return (size_t)tfs_hash_with(id, NULL, 0);
}

static struct node *by_id(uint64_t id)
{
	struct node *n;

	if (id == TFS_ROOT_ID)
		return &nt.root;
	for (n = nt.by_id[id_hash(id) % nt.nbuckets]; n && n->id != id; n = n->id_next)
		;
	return n;
}

static struct node *by_ent(const struct node *parent, const char *name)
{
	struct node *n = nt.by_ent[ent_hash(parent, name) % nt.nbuckets];

	while (n && (n->parent != parent || strcmp(n->name, name)))
		n = n->ent_next;
	return n;
}

static void ent_insert(struct node *n)
{
	size_t b = ent_hash(n->parent, n->name) % nt.nbuckets;

	n->ent_next = nt.by_ent[b];
	nt.by_ent[b] = n;
}

static void ent_remove(struct node *n)
{
	struct node **pp = &nt.by_ent[ent_hash(n->parent, n->name) % nt.nbuckets];

	for (; *pp; pp = &(*pp)->ent_next)
		if (*pp == n) {
			*pp = n->ent_next;
			return;
		}
}

static void id_insert(struct node *n)
{
	size_t b = id_hash(n->id) % nt.nbuckets;

	n->id_next = nt.by_id[b];
	nt.by_id[b] = n;
}

static void id_remove(struct node *n)
{
	struct node **pp = &nt.by_id[id_hash(n->id) % nt.nbuckets];

	for (; *pp; pp = &(*pp)->id_next)
		if (*pp == n) {
			*pp = n->id_next;
			return;
		}
}

/* Doubles both indexes when they fill up; on failure the chains just grow longer. */
static void grow(void)
{
	size_t nb = nt.nbuckets * 2;
	struct node **ids = calloc(nb, sizeof(*ids)), **ents = calloc(nb, sizeof(*ents));
	struct node **old_ids = nt.by_id, **old_ents = nt.by_ent;
	size_t ob = nt.nbuckets;

	if (!ids || !ents) {
		free(ids);
		free(ents);
		return;
	}
	nt.by_id = ids;
	nt.by_ent = ents;
	nt.nbuckets = nb;
	for (size_t i = 0; i < ob; i++) {
		for (struct node *n = old_ids[i], *next; n; n = next) {
			next = n->id_next;
			id_insert(n);
		}
		for (struct node *n = old_ents[i], *next; n; n = next) {
			next = n->ent_next;
			ent_insert(n);
		}
	}
	free(old_ids);
	free(old_ents);
}

int tfs_node_init(void)
{
	nt.nbuckets = 1024;
	nt.by_id = calloc(nt.nbuckets, sizeof(*nt.by_id));
	nt.by_ent = calloc(nt.nbuckets, sizeof(*nt.by_ent));
	if (!nt.by_id || !nt.by_ent) {
		free(nt.by_id);
		free(nt.by_ent);
		nt.by_id = nt.by_ent = NULL;
		return -ENOMEM;
	}
	nt.root.id = TFS_ROOT_ID;
	nt.root.nlookup = 1;
	return 0;
}

void tfs_node_fini(void)
{
	if (!nt.by_id)
		return;
	for (size_t i = 0; i < nt.nbuckets; i++)
		for (struct node *n = nt.by_id[i], *next; n; n = next) {
			next = n->id_next;
			free(n->name);
			free(n->ukey);
			free(n);
		}
	free(nt.by_id);
	free(nt.by_ent);
	nt.by_id = nt.by_ent = NULL;
	nt.count = 0;
	for (char *k; (k = tfs_node_take_unpinned()); )
		free(k);
}

/* Length of n's path, or -1 when n is detached (its path is gone). */
static long path_len(const struct node *n)
{
	long len = 0;

	for (; n != &nt.root; n = n->parent) {
		if (!n->parent)
			return -1;
		len += (long)strlen(n->name) + (n->parent != &nt.root);
	}
	return len;
}

/* n's path plus, when name is given, "/name": malloc'd, or NULL. */
static char *path_of(const struct node *n, const char *name)
{
	long len = path_len(n);
	size_t extra = name ? strlen(name) + (len > 0) : 0;
	char *p, *end;

	if (len < 0)
		return NULL;
	p = malloc((size_t)len + extra + 1);
	if (!p)
		return NULL;
	end = p + len;
	if (name) {
		if (len > 0)
			*end++ = '/';
		memcpy(end, name, strlen(name) + 1);
	} else {
		*end = '\0';
	}
	end = p + len;
	for (; n != &nt.root; n = n->parent) {
		size_t l = strlen(n->name);

		end -= l;
		memcpy(end, n->name, l);
		if (n->parent != &nt.root)
			*--end = '/';
	}
	return p;
}

int tfs_node_where(uint64_t id, struct tfs_where *w)
{
	struct node *n;
	int rc = 0;

	w->path = w->ukey = NULL;
	w->id = id;
	pthread_mutex_lock(&nt.mu);
	n = by_id(id);
	if (!n) {
		rc = -ESTALE;
	} else if (n == &nt.root || n->parent) {
		w->path = path_of(n, NULL);
		rc = w->path ? 0 : (path_len(n) < 0 ? -ESTALE : -ENOMEM);
	} else if (n->ukey) {
		w->ukey = strdup(n->ukey);
		rc = w->ukey ? 0 : -ENOMEM;
	} else {
		rc = -ESTALE;
	}
	pthread_mutex_unlock(&nt.mu);
	return rc;
}

void tfs_where_free(struct tfs_where *w)
{
	free(w->path);
	free(w->ukey);
	w->path = w->ukey = NULL;
}

int tfs_node_child_path(uint64_t parent, const char *name, char **path)
{
	struct node *p;
	int rc = 0;

	if (strlen(name) > NAME_MAX_BYTES)
		return -ENAMETOOLONG;
	pthread_mutex_lock(&nt.mu);
	p = by_id(parent);
	if (!p || path_len(p) < 0) {
		rc = -ESTALE;
	} else {
		*path = path_of(p, name);
		rc = *path ? 0 : -ENOMEM;
	}
	pthread_mutex_unlock(&nt.mu);
	return rc;
}

uint64_t tfs_node_new_ino(void)
{
	/* Drawn 32 at a time: a system call per create costs a few microseconds in a VM. */
	static __thread uint64_t pool[32];
	static __thread unsigned left;
	uint64_t r;

	if (!left && getrandom(pool, sizeof(pool), 0) == (ssize_t)sizeof(pool))
		left = 32;
	if (left)
		r = pool[--left];
	else
		r = (uint64_t)random() << 33 ^ (uint64_t)random() << 2 ^ (uint64_t)time(NULL);
	r &= INT64_MAX;               /* records keep it as a signed 64-bit number */
	return r <= TFS_ROOT_ID ? r + 2 : r;
}

static void detach(struct node *n, const char *ukey, int pinned);
static void maybe_free(struct node *n);

/* Under nt.mu: n leaves its place (if it has one) for name in p. */
static int replace(struct node *n, struct node *p, const char *name)
{
	char *nn = strdup(name);

	if (!nn)
		return -ENOMEM;
	if (n->parent) {
		ent_remove(n);
		n->parent->nchild--;
		if (n->parent != p)
			maybe_free(n->parent);
	}
	free(n->name);
	free(n->ukey);
	n->ukey = NULL;
	n->name = nn;
	n->parent = p;
	p->nchild++;
	ent_insert(n);
	return 0;
}

uint64_t tfs_node_lookup(uint64_t parent, const char *name, uint64_t ino)
{
	struct node *p, *n;
	uint64_t id = 0;
	char *path;

	pthread_mutex_lock(&nt.mu);
	p = by_id(parent);
	if (!p || path_len(p) < 0)
		goto out;
	n = by_ent(p, name);
	if (n && (!ino || n->id == ino)) {
		n->nlookup++;
		id = n->id;
		goto out;
	}
	/* The name now holds another tensor or directory than the node had (changed
	 * behind the kernel's back): that node keeps its id but loses the name. */
	if (n)
		detach(n, NULL, 0);
	/* The object is known by its id at another place (moved elsewhere, by another node
	 * or the queue): the same node, at its new place. */
	n = ino ? by_id(ino) : NULL;
	if (n && n != &nt.root) {
		if (replace(n, p, name))
			goto out;
		n->nlookup++;
		id = n->id;
		goto out;
	}
	n = calloc(1, sizeof(*n));
	if (!n || !(n->name = strdup(name))) {
		free(n);
		goto out;
	}
	/* Records made before inode numbers were kept: one derived from the path. */
	n->id = ino;
	if (!n->id) {
		if (!(path = path_of(p, name))) {
			free(n->name);
			free(n);
			goto out;
		}
		n->id = tfs_node_id_of(path);
		free(path);
	}
	while (n->id <= TFS_ROOT_ID || by_id(n->id))
		n->id++;
	n->nlookup = 1;
	n->parent = p;
	p->nchild++;
	if (nt.count + 1 > nt.nbuckets)
		grow();
	id_insert(n);
	ent_insert(n);
	nt.count++;
	id = n->id;
out:
	pthread_mutex_unlock(&nt.mu);
	return id;
}

/* Takes n off its parent; the parent may go with it. */
static void unparent(struct node *n);

/* Frees n if nothing needs it any more. */
static void maybe_free(struct node *n)
{
	if (n == &nt.root || n->nlookup || n->nchild)
		return;
	if (n->parent) {
		ent_remove(n);
		unparent(n);
	}
	id_remove(n);
	nt.count--;
	if (n->pinned && n->ukey) {
		/* Without memory for the note, the tensor's own deadline unpins it. */
		struct unpinned *u = malloc(sizeof(*u));

		if (u) {
			u->key = n->ukey;
			n->ukey = NULL;
			u->next = nt.unpinned;
			nt.unpinned = u;
			__atomic_store_n(&nt.nunpinned, nt.nunpinned + 1, __ATOMIC_RELAXED);
		}
	}
	free(n->name);
	free(n->ukey);
	free(n);
}

int tfs_node_unpinned_pending(void)
{
	return __atomic_load_n(&nt.nunpinned, __ATOMIC_RELAXED) > 0;
}

char *tfs_node_take_unpinned(void)
{
	struct unpinned *u;
	char *key = NULL;

	pthread_mutex_lock(&nt.mu);
	if ((u = nt.unpinned)) {
		nt.unpinned = u->next;
		__atomic_store_n(&nt.nunpinned, nt.nunpinned - 1, __ATOMIC_RELAXED);
		key = u->key;
		free(u);
	}
	pthread_mutex_unlock(&nt.mu);
	return key;
}

static void unparent(struct node *n)
{
	struct node *p = n->parent;

	n->parent = NULL;
	p->nchild--;
	maybe_free(p);
}

void tfs_node_forget(uint64_t id, uint64_t count)
{
	struct node *n;

	pthread_mutex_lock(&nt.mu);
	n = by_id(id);
	if (n && n != &nt.root) {
		n->nlookup = count < n->nlookup ? n->nlookup - count : 0;
		maybe_free(n);
	}
	pthread_mutex_unlock(&nt.mu);
}

/* Under nt.mu: n loses its place in the tree. */
static void detach(struct node *n, const char *ukey, int pinned)
{
	ent_remove(n);
	free(n->ukey);
	n->ukey = ukey ? strdup(ukey) : NULL;
	n->pinned = pinned;
	unparent(n);
	maybe_free(n);
}

static int detach_at(uint64_t parent, const char *name, const char *ukey, int pinned)
{
	struct node *p, *n;

	pthread_mutex_lock(&nt.mu);
	p = by_id(parent);
	n = p ? by_ent(p, name) : NULL;
	if (n)
		detach(n, ukey, pinned);
	pthread_mutex_unlock(&nt.mu);
	return n != NULL;
}

void tfs_node_detach(uint64_t parent, const char *name, const char *ukey)
{
	detach_at(parent, name, ukey, 0);
}

int tfs_node_detach_pinned(uint64_t parent, const char *name, const char *ukey)
{
	return detach_at(parent, name, ukey, 1);
}

void tfs_node_move(uint64_t parent, const char *name, uint64_t newparent, const char *newname)
{
	struct node *p, *np, *n, *old;
	char *nn;

	pthread_mutex_lock(&nt.mu);
	p = by_id(parent);
	np = by_id(newparent);
	n = p ? by_ent(p, name) : NULL;
	old = np ? by_ent(np, newname) : NULL;
	if (old && old != n)
		detach(old, NULL, 0);
	if (!n)
		goto out;
	if (!np || !(nn = strdup(newname))) {
		/* Cannot follow it: detached, the kernel looks the new name up afresh. */
		detach(n, NULL, 0);
		goto out;
	}
	ent_remove(n);
	free(n->name);
	n->name = nn;
	np->nchild++;
	n->parent = np;
	p->nchild--;
	ent_insert(n);
	maybe_free(p);
out:
	pthread_mutex_unlock(&nt.mu);
}

int tfs_node_find(const char *path, uint64_t *parent, uint64_t *id)
{
	struct node *n = &nt.root, *c = NULL;
	char comp[NAME_MAX_BYTES + 1];
	const char *s = path, *e;
	int rc = -ENOENT;

	pthread_mutex_lock(&nt.mu);
	*parent = *id = 0;
	if (!*path) {
		*id = TFS_ROOT_ID;
		rc = 0;
		goto out;
	}
	for (;;) {
		size_t l;

		e = strchr(s, '/');
		l = e ? (size_t)(e - s) : strlen(s);
		if (l > NAME_MAX_BYTES)
			goto out;
		memcpy(comp, s, l);
		comp[l] = '\0';
		if (!e)
			break;
		n = by_ent(n, comp);
		if (!n)
			goto out;
		s = e + 1;
	}
	*parent = n->id;
	c = by_ent(n, comp);
	*id = c ? c->id : 0;
	rc = 0;
out:
	pthread_mutex_unlock(&nt.mu);
	return rc;
}
