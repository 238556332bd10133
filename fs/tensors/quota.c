/* Per-owner counts and path bounds (quota.h): a small hash of owners, each with what it
 * has. Under ns. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "tensors/quota.h"

#define NBUCKETS 256

struct owner {
	int64_t uid;
	int64_t tensors, holds;
	struct owner *next;
};

struct tfs_limits tfs_limits = {
	1024, 16384, 8192, 256, 256 << 10, 16 << 20, 65536
};

static struct owner *buckets[NBUCKETS];

static struct owner **find(int64_t uid)
{
	struct owner **p = &buckets[(uint64_t)uid % NBUCKETS];

	while (*p && (*p)->uid != uid)
		p = &(*p)->next;
	return p;
}

static struct owner *get(int64_t uid, int make)
{
	struct owner **p = find(uid), *o;
	static int complained;

	if (*p || !make)
		return *p;
	o = calloc(1, sizeof(*o));
	if (!o) {
		if (!complained++)
			tfs_log(LOG_ERR, "out of memory: some owners' tensors and holds go uncounted");
		return NULL;
	}
	o->uid = uid;
	*p = o;
	return o;
}

static void count(int64_t uid, int64_t tensors, int64_t holds)
{
	struct owner **p, *o = get(uid, tensors > 0 || holds > 0);

	if (!o)
		return;
	o->tensors = o->tensors + tensors < 0 ? 0 : o->tensors + tensors;
	o->holds = o->holds + holds < 0 ? 0 : o->holds + holds;
	if (o->tensors || o->holds)
		return;
	p = find(uid);
	*p = o->next;
	free(o);
}

void tfs_quota_tensors(uid_t uid, int64_t n)
{
	count(uid, n, 0);
}

void tfs_quota_holds(int64_t uid, int64_t n)
{
	if (uid >= 0)
		count(uid, 0, n);
}

int tfs_quota_tensor_check(uid_t uid)
{
	struct owner *o = get(uid, 0);

	return uid && o && (uint64_t)o->tensors >= tfs_limits.user_tensors ? -EDQUOT : 0;
}

int tfs_quota_holds_check(int64_t uid, int64_t n)
{
	struct owner *o = uid > 0 ? get(uid, 0) : NULL;

	return o && (uint64_t)(o->holds + n) > tfs_limits.user_holds ? -EDQUOT : 0;
}

int tfs_quota_path(const char *name)
{
	uint64_t depth = 1;

	if (strlen(name) > tfs_limits.path)
		return -ENAMETOOLONG;
	for (const char *p = name; (p = strchr(p, '/')); p++)
		depth++;
	return depth > tfs_limits.depth ? -ENAMETOOLONG : 0;
}
