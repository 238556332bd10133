/* Writes merged within an atomic group (fs/store/group_merge.c) and the keys of a queued
 * command (tfs_resp_keys, fs/store/coalesce.c), on bytes: a DEL joins the group's last DEL
 * and an HDEL the last write of its hash only when nothing between them touched the key. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../fs/store/coalesce.c"
#include "../../fs/store/group_merge.c"
#include "../../fs/util/hash.c"

#include "tap.h"

#define MAXI 64

static struct tfs_gmerge g;
static struct wb_item *items[MAXI];
static int nitems;

/* A formatted item, as tfs_writer_cmdf queues it. */
static struct wb_item *cmd(const char *fmt, ...)
{
	struct wb_item *it = calloc(1, sizeof(*it) + 1);
	va_list ap;

	va_start(ap, fmt);
	it->len = redisvFormatCommand(&it->cmd, fmt, ap);
	va_end(ap);
	return it;
}

/* An unformatted DEL, as tfs_writer_save(key, m, 1) queues before the record. */
static struct wb_item *del_unformatted(const char *key)
{
	struct wb_item *it = calloc(1, sizeof(*it) + strlen(key) + 1);

	strcpy(it->key, key);
	return it;
}

/* Adds it to the group: 1 when merged (then freed). */
static int add(struct wb_item *it)
{
	if (tfs_gmerge_add(&g, it)) {
		free(it->cmd);
		free(it);
		return 1;
	}
	items[nitems++] = it;
	return 0;
}

static void reset(void)
{
	for (int i = 0; i < nitems; i++) {
		free(items[i]->cmd);
		free(items[i]);
	}
	nitems = 0;
	tfs_gmerge_reset(&g);
}

/* Whether item i's command is the one fmt formats. */
static int is(int i, const char *fmt, ...)
{
	char *want = NULL;
	va_list ap;
	int n, same;

	va_start(ap, fmt);
	n = redisvFormatCommand(&want, fmt, ap);
	va_end(ap);
	same = i < nitems && items[i]->cmd && items[i]->len == n &&
	       memcmp(items[i]->cmd, want, (size_t)n) == 0;
	if (!same && i < nitems && items[i]->cmd)
		printf("# item %d: %.*s\n", i, items[i]->len, items[i]->cmd);
	free(want);
	return same;
}

static char seen[8][64];
static int nseen;

static void seen_fn(const char *key, size_t len, void *arg)
{
	(void)arg;
	if (nseen < 8)
		snprintf(seen[nseen++], sizeof(seen[0]), "%.*s", (int)len, key);
}

static int keys_are(struct wb_item *it, const char *want)
{
	char got[8 * 65] = "";
	int rc;

	nseen = 0;
	rc = tfs_resp_keys(it->cmd, it->len, seen_fn, NULL);
	for (int i = 0; i < nseen; i++) {
		if (i)
			strcat(got, " ");
		strcat(got, seen[i]);
	}
	free(it->cmd);
	free(it);
	if (rc || strcmp(got, want))
		printf("# keys: '%s' (rc %d), expected '%s'\n", got, rc, want);
	return rc == 0 && strcmp(got, want) == 0;
}

int main(void)
{
	ok(keys_are(cmd("HSET k f v"), "k"), "keys: HSET names its first argument");
	ok(keys_are(cmd("DEL a b c"), "a b c"), "keys: DEL names every argument");
	ok(keys_are(cmd("RENAME a b"), "a b"), "keys: RENAME names two");
	ok(keys_are(cmd("EVAL %s 2 x y arg", "return 1"), "x y"),
	   "keys: EVAL names those its count says, not its arguments");
	ok(keys_are(cmd("EVAL %s 0 arg", "return 1"), ""), "keys: EVAL with no keys names none");

	tfs_gmerge_reset(&g);
	add(del_unformatted("t:a"));
	add(cmd("HSET t:a dtype u8"));
	ok(add(del_unformatted("t:b")) == 1, "a DEL of another key joins the group's DEL");
	add(cmd("HSET t:b dtype u8"));
	ok(add(cmd("DEL t:c")) == 1, "a formatted DEL joins it too");
	ok(nitems == 3 && is(0, "DEL t:a t:b t:c") && is(1, "HSET t:a dtype u8") &&
	   is(2, "HSET t:b dtype u8"), "one DEL of the three keys, first, then the records");
	reset();

	add(cmd("DEL t:a"));
	add(cmd("HSET t:b dtype u8"));
	ok(add(cmd("DEL t:b")) == 0, "a DEL of a key written after the group's DEL stays in place");
	ok(nitems == 3 && is(0, "DEL t:a") && is(2, "DEL t:b"), "the order of the writes of t:b kept");
	ok(add(cmd("DEL t:c")) == 1 && is(2, "DEL t:b t:c"), "a later DEL joins the last DEL");
	reset();

	add(cmd("DEL t:a"));
	add(cmd("EVAL %s 2 q t:b x", "return 1"));
	ok(add(cmd("DEL t:b")) == 0, "a key a script touched after the DEL: not moved before it");
	reset();

	add(cmd("HDEL d: a"));
	add(cmd("DEL t:a"));
	ok(add(cmd("HDEL d: b")) == 1, "an HDEL joins the last write of its hash, an HDEL");
	ok(add(cmd("HDEL e: c")) == 0, "an HDEL of another hash does not");
	ok(nitems == 3 && is(0, "HDEL d: a b") && is(1, "DEL t:a") && is(2, "HDEL e: c"),
	   "one HDEL per hash");
	add(cmd("HSETNX d: c t"));
	ok(add(cmd("HDEL d: c")) == 0, "an HDEL after another write of its hash stays in place");
	ok(nitems == 5 && is(0, "HDEL d: a b") && is(4, "HDEL d: c"), "the order of d:'s writes kept");
	reset();

	add(cmd("HDEL d: a"));
	add(cmd("DEL d:"));
	ok(add(cmd("HDEL d: b")) == 0, "an HDEL after a DEL of its hash stays in place");
	reset();

	add(cmd("HSET k f v"));
	ok(add(cmd("DEL x")) == 0 && add(cmd("DEL y")) == 1 && is(1, "DEL x y"),
	   "the first DEL of a group is where later ones go");
	reset();

	printf("%d checks, %d failures\n", checks, failures);
	return failures != 0;
}
