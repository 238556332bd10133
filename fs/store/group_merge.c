/* Writes merged within one atomic group (writer_items.h): a chunk of queue commands writes
 * a DEL and an HDEL per tensor it removes and a DEL per tensor it makes; in the group's
 * MULTI/EXEC they go as one DEL of all those keys and one HDEL per directory. Moving a
 * write to the place of an earlier one inside a transaction changes nothing anyone can
 * see, provided no write between the two touches its key: each key's last toucher is
 * noted by the hash of the key, and a collision of hashes only ever makes a key look
 * touched later than it was (no merge). All on the calling thread. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/writer_items.h"
#include "util/hash.h"

void tfs_gmerge_reset(struct tfs_gmerge *g)
{
	memset(g->hash, 0, sizeof(g->hash));
	g->n = g->used = g->off = 0;
	g->del = NULL;
	g->del_at = -1;
}

static uint64_t gkey_hash(const char *key, size_t len)
{
	uint64_t h = tfs_hash(key, len);

	return h ? h : 1;
}

/* The slot of h (free when not there), or -1 when the table is full. */
static int slot(struct tfs_gmerge *g, uint64_t h)
{
	for (int i = 0, s = (int)(h % GMERGE_SLOTS); i < GMERGE_SLOTS;
	     i++, s = (s + 1) % GMERGE_SLOTS)
		if (g->hash[s] == h || !g->hash[s])
			return s;
	return -1;
}

/* The index of the last item that touched key, or -1 for none. */
static int last_touch(struct tfs_gmerge *g, const char *key, size_t len, int *s)
{
	uint64_t h = gkey_hash(key, len);

	*s = slot(g, h);
	return *s >= 0 && g->hash[*s] == h ? g->last[*s] : -1;
}

struct touch {
	struct tfs_gmerge *g;
	int at;
	struct wb_item *hdel;
};

static void touch_fn(const char *key, size_t len, void *arg)
{
	struct touch *t = arg;
	struct tfs_gmerge *g = t->g;
	uint64_t h = gkey_hash(key, len);
	int s = slot(g, h);

	if (s < 0 || (!g->hash[s] && g->used >= GMERGE_SLOTS * 3 / 4)) {
		g->off = 1;          /* too many keys to follow: no more merging */
		return;
	}
	if (!g->hash[s]) {
		g->hash[s] = h;
		g->used++;
	}
	g->last[s] = t->at;
	g->hdel[s] = t->hdel;
}

/* The command word of a formatted it ("DEL", "HDEL"...) and its argument count. */
static int word_is(const struct wb_item *it, const char *w)
{
	size_t wl = strlen(w);
	const char *p;

	if (!it->cmd || it->len < 8 || it->cmd[0] != '*')
		return 0;
	p = memchr(it->cmd, '\n', (size_t)it->len);
	if (!p || p[1] != '$' || (size_t)strtol(p + 2, NULL, 10) != wl)
		return 0;
	p = memchr(p + 1, '\n', (size_t)(it->cmd + it->len - p - 1));
	return p && (size_t)(it->cmd + it->len - p - 1) > wl && strncasecmp(p + 1, w, wl) == 0 &&
	       p[1 + wl] == '\r';
}

static long argc_of(const struct wb_item *it)
{
	return strtol(it->cmd + 1, NULL, 10);
}

/* The last argument of a formatted it, which must have one past its word. */
static int last_arg(const struct wb_item *it, const char **a, size_t *al)
{
	const char *p = it->cmd, *end = it->cmd + it->len, *q = NULL;
	size_t ql = 0;
	long n = argc_of(it);
	char *e;

	p = memchr(p, '\n', (size_t)(end - p));
	for (long i = 0; p && i < n; i++) {
		long l = strtol(p + 2, &e, 10);

		q = e + 2;
		ql = (size_t)l;
		if (l < 0 || q + l + 2 > end)
			return -1;
		p = q + l + 1;
	}
	if (!q)
		return -1;
	*a = q;
	*al = ql;
	return 0;
}

/* into's command with one more argument, a[al]: 0 or -1 (out of memory: unchanged). */
static int append_arg(struct wb_item *into, const char *a, size_t al)
{
	const char *body = memchr(into->cmd, '\n', (size_t)into->len);
	size_t blen = (size_t)(into->cmd + into->len - body - 1);
	char head[32], alen[32];
	int hl = snprintf(head, sizeof(head), "*%ld\r\n", argc_of(into) + 1);
	int ll = snprintf(alen, sizeof(alen), "$%zu\r\n", al);
	size_t n = (size_t)hl + blen + (size_t)ll + al + 2;
	char *c = malloc(n + 1);

	if (!c)
		return -1;
	memcpy(c, head, (size_t)hl);
	memcpy(c + hl, body + 1, blen);
	memcpy(c + hl + blen, alen, (size_t)ll);
	memcpy(c + hl + blen + ll, a, al);
	memcpy(c + hl + blen + ll + al, "\r\n", 3);
	/* The writer frees commands with redisFreeCommand, which is free. */
	free(into->cmd);
	into->cmd = c;
	into->len = (int)n;
	return 0;
}

/* An unformatted DEL (tfs_writer_save's) as a command that more keys may join: 0 or -1. */
static int format_del(struct wb_item *it)
{
	it->len = redisFormatCommand(&it->cmd, "DEL %s", it->key);
	if (it->len < 0 || !it->cmd) {
		it->cmd = NULL;
		return -1;
	}
	return 0;
}

/* HDEL key field: its key. 0 or -1. */
static int hdel_key(const struct wb_item *it, const char **k, size_t *kl)
{
	const char *end = it->cmd + it->len, *p = it->cmd;
	char *e;
	long l;

	for (int i = 0; i < 3 && p; i++)
		p = memchr(p + (i > 0), '\n', (size_t)(end - p - (i > 0)));
	if (!p || p + 2 >= end || p[1] != '$')
		return -1;
	l = strtol(p + 2, &e, 10);
	if (l < 0 || e + 2 + l > end)
		return -1;
	*k = e + 2;
	*kl = (size_t)l;
	return 0;
}

/* A DEL of one key (unformatted, from tfs_writer_save, or formatted): 1 with its key. */
static int single_del(struct wb_item *it, const char **k, size_t *kl)
{
	if (!it->cmd && !it->meta && !it->field) {
		*k = it->key;
		*kl = strlen(it->key);
		return 1;
	}
	if (it->field || !word_is(it, "DEL") || argc_of(it) != 2)
		return 0;
	return last_arg(it, k, kl) == 0;
}

int tfs_gmerge_add(struct tfs_gmerge *g, struct wb_item *it)
{
	struct touch t = { .g = g, .at = g->n, .hdel = NULL };
	const char *k, *f, *k2;
	size_t kl, fl, kl2;
	int s, at;

	if (!g->off && single_del(it, &k, &kl) && g->del) {
		at = last_touch(g, k, kl, &s);
		if (at <= g->del_at && (g->del->cmd || format_del(g->del) == 0) &&
		    append_arg(g->del, k, kl) == 0) {
			t.at = g->del_at;
			touch_fn(k, kl, &t);
			return 1;
		}
	}
	if (!g->off && !it->field && word_is(it, "HDEL") && argc_of(it) == 3 &&
	    hdel_key(it, &k, &kl) == 0 && last_arg(it, &f, &fl) == 0) {
		at = last_touch(g, k, kl, &s);
		/* The last write of the key is an HDEL of it (the very key, not one whose hash
		 * is the same): this one joins it. */
		if (at >= 0 && s >= 0 && g->hdel[s] && hdel_key(g->hdel[s], &k2, &kl2) == 0 &&
		    kl2 == kl && memcmp(k2, k, kl) == 0 && append_arg(g->hdel[s], f, fl) == 0)
			return 1;
		t.hdel = it;
	}
	/* Not merged: it is noted as the last write of its keys. */
	if (!it->cmd)
		touch_fn(it->key, strlen(it->key), &t);
	else if (tfs_resp_keys(it->cmd, it->len, touch_fn, &t))
		g->off = 1;
	if (single_del(it, &k, &kl)) {
		g->del = it;
		g->del_at = g->n;
	}
	g->n++;
	return 0;
}
