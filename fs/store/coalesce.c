/* The writer's coalescing index (writer_items.h): the queued writes not yet taken that a
 * later write of the same key may replace, by key. Every function runs under the
 * writer's lock. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/writer_items.h"
#include "util/hash.h"

#define IDX_BUCKETS 65536

static struct wb_item **idx;   /* IDX_BUCKETS chains; NULL: nothing merged */

void tfs_coalesce_init(void)
{
	if (!idx)
		idx = calloc(IDX_BUCKETS, sizeof(*idx));
}

static uint64_t key_hash(const char *k, size_t len)
{
	return tfs_hash(k, len);
}

static struct wb_item **idx_bucket(const char *key, size_t len)
{
	return &idx[key_hash(key, len) % IDX_BUCKETS];
}

void tfs_coalesce_remove(struct wb_item *it)
{
	struct wb_item **pp;

	if (!it->indexed)
		return;
	for (pp = idx_bucket(it->key, strlen(it->key)); *pp; pp = &(*pp)->inext) {
		if (*pp == it) {
			*pp = it->inext;
			break;
		}
	}
	it->indexed = 0;
	it->inext = NULL;
}

/* A write of key (len bytes) that is not merged: what was queued before it for key may no
 * longer take later writes in its place. Caller holds the writer's lock. */
static void idx_barrier(const char *key, size_t len)
{
	struct wb_item **pp, *e;

	if (!idx)
		return;
	for (pp = idx_bucket(key, len); (e = *pp);) {
		if (strlen(e->key) == len && memcmp(e->key, key, len) == 0) {
			*pp = e->inext;
			e->indexed = 0;
			e->inext = NULL;
		} else {
			pp = &e->inext;
		}
	}
}

/* The n-th argument of a RESP command (as redisFormatCommand makes them); -1 when there
 * is none. */
static int resp_arg(const char *cmd, int len, int n, const char **arg, size_t *alen)
{
	const char *p = cmd, *end = cmd + len;
	long argc, l;
	char *q;

	if (!cmd || len < 4 || *p != '*')
		return -1;
	argc = strtol(p + 1, &q, 10);
	if (n >= argc)
		return -1;
	p = q + 2;
	for (int i = 0; p < end && *p == '$'; i++) {
		l = strtol(p + 1, &q, 10);
		p = q + 2;
		if (l < 0 || p + l > end)
			return -1;
		if (i == n) {
			*arg = p;
			*alen = (size_t)l;
			return 0;
		}
		p += l + 2;
	}
	return -1;
}

int tfs_resp_keys(const char *cmd, int len, void (*fn)(const char *key, size_t klen, void *arg),
		  void *arg)
{
	const char *a, *p, *end = cmd + len;
	size_t al;
	long argc, nkeys, l, first = 1, last = 1;
	char num[24], *q;

	if (resp_arg(cmd, len, 0, &a, &al))
		return -1;
	argc = strtol(cmd + 1, NULL, 10);
	if ((al == 4 && strncasecmp(a, "EVAL", 4) == 0) ||
	    (al == 7 && strncasecmp(a, "EVALSHA", 7) == 0)) {
		if (resp_arg(cmd, len, 2, &a, &al) || al >= sizeof(num))
			return -1;
		memcpy(num, a, al);
		num[al] = '\0';
		nkeys = strtol(num, NULL, 10);
		first = 3;
		last = 2 + nkeys;
	} else if ((al == 6 && strncasecmp(a, "RENAME", 6) == 0) ||
		   (al == 8 && strncasecmp(a, "RENAMENX", 8) == 0)) {
		last = 2;
	} else if ((al == 3 && strncasecmp(a, "DEL", 3) == 0) ||
		   (al == 6 && strncasecmp(a, "UNLINK", 6) == 0) ||
		   (al == 6 && strncasecmp(a, "EXISTS", 6) == 0)) {
		last = argc - 1;
	}
	p = strchr(cmd, '\n') + 1;
	for (long i = 0; i <= last && p < end && *p == '$'; i++) {
		l = strtol(p + 1, &q, 10);
		p = q + 2;
		if (l < 0 || p + l > end)
			return -1;
		if (i >= first)
			fn(p, (size_t)l, arg);
		p += l + 2;
	}
	return 0;
}

static void barrier_fn(const char *key, size_t klen, void *arg)
{
	(void)arg;
	idx_barrier(key, klen);
}

/* The keys a formatted command writes, as barriers. Caller holds the writer's lock. */
static void idx_barrier_cmd(const char *cmd, int len)
{
	tfs_resp_keys(cmd, len, barrier_fn, NULL);
}

/* An hset1 item's command again, with field's value in the whole record m (a later
 * whole-record write merged before it must not be undone by it): 0, or -ENOMEM (the
 * item keeps its old value, which only the next write of the record mends). */
static int reformat_field(struct wb_item *e, const struct tfs_meta *m)
{
	struct tfs_meta_fields f;
	char *cmd = NULL;
	int len;

	tfs_meta_to_fields(m, &f);
	for (int i = 0; i < f.n; i++) {
		if (strcmp(f.field[i], e->field))
			continue;
		len = redisFormatCommand(&cmd, "HSET %s %s %b", e->key, e->field, f.value[i],
					 f.len[i]);
		if (len < 0)
			return -ENOMEM;
		redisFreeCommand(e->cmd);
		e->cmd = cmd;
		e->len = len;
		return 0;
	}
	return 0;
}

/* HSETs of one key with no other write of that key between them can be sent as one, at
 * the place of the first: nothing between them reads or writes the key. So an hset1
 * takes the place of the indexed hset1 of the same field, and a whole record that of the
 * indexed whole record, whose later-queued hset1s of its fields then take the new values
 * (they were queued after it: the record's values must win over theirs now). */
int tfs_coalesce_merge(struct wb_item *it)
{
	size_t klen = strlen(it->key);
	struct wb_item *e, *rec = NULL;

	if (!idx)
		return 0;
	for (e = *idx_bucket(it->key, klen); e; e = e->inext) {
		if (strcmp(e->key, it->key))
			continue;
		if (it->field && e->field && strcmp(e->field, it->field) == 0) {
			char *cmd = e->cmd;
			int len = e->len;

			e->cmd = it->cmd;
			e->len = it->len;
			it->cmd = cmd;
			it->len = len;
			return 1;
		}
		if (!it->field && !e->field)
			rec = e;
	}
	if (it->field || !rec)
		return 0;
	*rec->meta = *it->meta;
	for (e = *idx_bucket(it->key, klen); e; e = e->inext)
		if (e->field && strcmp(e->key, it->key) == 0)
			reformat_field(e, it->meta);
	return 1;
}

void tfs_coalesce_queued(struct wb_item *it, int mergeable)
{
	if (it->tx && (it->field || !it->cmd)) {
		/* In an atomic group nothing merges, either way: a later write taking the place
		 * of one in the group would land with the group, before its own turn. */
		idx_barrier(it->key, strlen(it->key));
	} else if (it->field) {
		/* Queued after the indexed whole record (if any) of its key: the next record
		 * merges there, before this one, and rewrites it (tfs_coalesce_merge). */
	} else if (it->meta && !it->cmd) {
		idx_barrier(it->key, strlen(it->key));
	} else if (!it->cmd) {
		idx_barrier(it->key, strlen(it->key));          /* DEL of key */
	} else {
		idx_barrier_cmd(it->cmd, it->len);
	}
	if (mergeable && idx) {
		struct wb_item **b = idx_bucket(it->key, strlen(it->key));

		it->inext = *b;
		*b = it;
		it->indexed = 1;
	}
}
