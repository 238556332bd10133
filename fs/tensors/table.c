/* The table of the tensors this daemon holds memory for, keyed by Redis key (a linked
 * tensor's <prefix>:tensor:<path>, an unlinked one's key of its own). Under tfs_tensors.ns. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensors/quota.h"
#include "tensors/tensor.h"
#include "store/store.h"
#include "strutil.h"
#include "tensors/tensors.h"
#include "util/hash.h"

/* Adaptive: most holds of ns are a few microseconds, shorter than putting a waiter to
 * sleep and waking it, which is what a contended lock cost each metadata operation (8
 * FUSE threads creating, writing and unlinking small tensors: 4-13% more per second on
 * a 16-CPU VM, tests/bench/RESULTS-small.md). */
struct tfs_tensors tfs_tensors = { .ns = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP };

static uint64_t key_hash(const char *s)
{
	return tfs_hash_str(s);
}

/* Inode numbers are random (tfs_node_new_ino): their low bits are hash enough. */
static size_t ino_slot(uint64_t ino, size_t n)
{
	return (size_t)(ino % n);
}

int tfs_table_init(struct tfs_table *tb)
{
	tb->nbuckets = 4096;
	tb->buckets = calloc(tb->nbuckets, sizeof(*tb->buckets));
	tb->by_ino = calloc(tb->nbuckets, sizeof(*tb->by_ino));
	if (tb->buckets && tb->by_ino)
		return 0;
	free(tb->buckets);
	free(tb->by_ino);
	tb->buckets = tb->by_ino = NULL;
	return -ENOMEM;
}

static void grow(struct tfs_table *tb)
{
	size_t n = tb->nbuckets * 4;
	struct tfsd_tensor **b = calloc(n, sizeof(*b)), **bi = calloc(n, sizeof(*bi));

	if (!b || !bi) {
		free(b);
		free(bi);
		return;                /* keep the longer chains: slower, still correct */
	}
	for (size_t i = 0; i < tb->nbuckets; i++) {
		struct tfsd_tensor *t, *next;

		for (t = tb->buckets[i]; t; t = next) {
			next = t->next;
			t->next = b[key_hash(t->key) % n];
			b[key_hash(t->key) % n] = t;
		}
		for (t = tb->by_ino[i]; t; t = next) {
			next = t->ino_next;
			t->ino_next = bi[ino_slot(t->ino_key, n)];
			bi[ino_slot(t->ino_key, n)] = t;
		}
	}
	free(tb->buckets);
	free(tb->by_ino);
	tb->buckets = b;
	tb->by_ino = bi;
	tb->nbuckets = n;
}

void tfs_table_insert(struct tfsd_tensor *t)
{
	struct tfs_table *tb = &tfs_tensors.table;
	size_t i;

	if (tb->count >= tb->nbuckets)
		grow(tb);
	i = key_hash(t->key) % tb->nbuckets;
	t->next = tb->buckets[i];
	tb->buckets[i] = t;
	t->ino_key = t->meta.ino;
	i = ino_slot(t->ino_key, tb->nbuckets);
	t->ino_next = tb->by_ino[i];
	tb->by_ino[i] = t;
	tb->count++;
	tfs_quota_tensors(t->meta.uid, 1);
}

void tfs_table_remove(struct tfsd_tensor *t)
{
	struct tfs_table *tb = &tfs_tensors.table;
	struct tfsd_tensor **pp = &tb->buckets[key_hash(t->key) % tb->nbuckets];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			tb->count--;
			tfs_quota_tensors(t->meta.uid, -1);
			break;
		}
	}
	for (pp = &tb->by_ino[ino_slot(t->ino_key, tb->nbuckets)]; *pp; pp = &(*pp)->ino_next) {
		if (*pp == t) {
			*pp = t->ino_next;
			break;
		}
	}
}

struct tfsd_tensor *tfs_table_find_key(const char *key)
{
	struct tfs_table *tb = &tfs_tensors.table;
	struct tfsd_tensor *t = tb->buckets[key_hash(key) % tb->nbuckets];

	while (t && strcmp(t->key, key))
		t = t->next;
	return t;
}

struct tfsd_tensor *tfs_table_find(const char *name)
{
	char key[TFS_KEYMAX];

	if (tfs_key(key, sizeof(key), "tensor", name))
		return NULL;
	return tfs_table_find_key(key);
}

struct tfsd_tensor *tfs_table_find_ino(uint64_t ino)
{
	struct tfs_table *tb = &tfs_tensors.table;
	struct tfsd_tensor *t;

	if (!ino)
		return NULL;
	/* One whose meta.ino changed since it was inserted is not found: never another. */
	for (t = tb->by_ino[ino_slot(ino, tb->nbuckets)]; t; t = t->ino_next)
		if (t->ino_key == ino && t->meta.ino == ino)
			return t;
	return NULL;
}

void tfs_table_foreach(void (*fn)(struct tfsd_tensor *, void *), void *arg)
{
	struct tfs_table *tb = &tfs_tensors.table;

	for (size_t i = 0; i < tb->nbuckets; i++)
		for (struct tfsd_tensor *t = tb->buckets[i], *next; t; t = next) {
			next = t->next;
			fn(t, arg);
		}
}
