/* The Redis key layout (schema.h): names only, no I/O. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/schema.h"

struct tfs_schema tfs_schema = {
	.prefix = "tensorfs",
	.queue = "tensor_lifecycle",
	.node = "",
};

int tfs_user_field(char *buf, size_t size, const char *name)
{
	int n = snprintf(buf, size, "x:%s", name);

	return n < 0 || (size_t)n >= size ? -ERANGE : 0;
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

int tfs_key(char *buf, size_t size, const char *kind, const char *name)
{
	int n = snprintf(buf, size, "%s:%s:%s", tfs_schema.prefix, kind, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

void tfs_split(const char *name, char *parent, size_t psize, const char **base)
{
	const char *slash = strrchr(name, '/');
	int n = slash ? (int)(slash - name) : 0;

	*base = slash ? slash + 1 : name;
	snprintf(parent, psize, "%.*s", n, name);
}

int tfs_store_unlinked_key(char *buf, size_t size, uint64_t seq)
{
	int n = snprintf(buf, size, "%s:unlinked:%s:%llu", tfs_schema.prefix, tfs_schema.node,
			 (unsigned long long)seq);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

void tfs_holder_field(char *buf, size_t size, const char *node, int64_t pid)
{
	snprintf(buf, size, "holder:%s:%lld", node, (long long)pid);
}

void tfs_store_node_queue(char *buf, size_t size, const char *node)
{
	snprintf(buf, size, "{%s}:node:%s", tfs_schema.queue, node);
}

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
	size_t pl = strlen(tfs_schema.prefix), ql = strlen(tfs_schema.queue);

	if (!*key)
		return 0;
	/* The daemon's own keys and the queues are never reply keys. */
	if (strncmp(key, tfs_schema.prefix, pl) == 0 && key[pl] == ':')
		return 0;
	if (strcmp(key, tfs_schema.queue) == 0)
		return 0;
	if (key[0] == '{' && strncmp(key + 1, tfs_schema.queue, ql) == 0 && key[ql + 1] == '}')
		return 0;
	/* Under the per-user lists only their reply keys: never a user's queue itself. */
	if (strncmp(key, tfs_schema.queue, ql) == 0 && strncmp(key + ql, ":u:", 3) == 0)
		return queue_user_reply_key(key + ql + 3);
	return 1;
}

void tfs_store_queue_user_list(char *buf, size_t size, uid_t uid)
{
	snprintf(buf, size, "%s:u:%u", tfs_schema.queue, (unsigned)uid);
}

void tfs_store_queue_acl_name(char *buf, size_t size, uid_t uid)
{
	snprintf(buf, size, "u%u.%s", (unsigned)uid, tfs_schema.queue);
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

void tfs_store_alive_key(char *buf, size_t size, const char *node)
{
	snprintf(buf, size, "%s:alive:%s", tfs_schema.prefix, node);
}

void tfs_store_peer_key(char *buf, size_t size, const char *node)
{
	snprintf(buf, size, "%s:ucx:%s", tfs_schema.prefix, node);
}
