/* Moves between tiers by name, one tensor or a directory's tree at once, all or none
 * (tensorfs.h tfs_move, docs/tiers.md). Each move is the daemon's: a setxattr of
 * user.tensor.device. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "client_internal.h"
#include "tier.h"

#define MOVE_MAX_TENSORS (1 << 20)   /* a tree larger than this is refused (-E2BIG) */
#define MOVE_MAX_DEPTH 256

struct item {
	char *path;
	int from;                 /* where it was */
	int moved;
	uint64_t bytes;
};

struct job {
	struct item *it;
	size_t n, cap, next;
	int device, rc, done;
	uint64_t bytes, done_bytes;
	const struct tfs_move_opts *o;
	pthread_mutex_t mu;
	char why[PATH_MAX + 128];
};

static int get_device(const char *path, int *dev)
{
	char v[TFS_TIER_NAME_MAX + 8];
	ssize_t n = getxattr(path, "user.tensor.device", v, sizeof(v));

	if (n < 0)
		return -errno;
	return tfs_tier_parse(v, (size_t)n, dev) ? -EBADMSG : 0;
}

static int set_device(const char *path, int dev)
{
	char v[TFS_TIER_NAME_MAX];

	tfs_tier_name(dev, v, sizeof(v));
	return setxattr(path, "user.tensor.device", v, strlen(v), 0) ? -errno : 0;
}

static int add(struct job *j, const char *path, const struct stat *st)
{
	struct item *it;
	int dev, rc;

	if ((rc = get_device(path, &dev)))
		return tfs_seterr(rc, "%s: user.tensor.device: %s", path, tfs_strerror(rc));
	if (dev == j->device)
		return 0;
	if (j->n == j->cap) {
		size_t ncap = j->cap ? j->cap * 2 : 64;

		if (ncap > MOVE_MAX_TENSORS)
			return tfs_seterr(-E2BIG, "%s: more than %d tensors", path, MOVE_MAX_TENSORS);
		it = realloc(j->it, ncap * sizeof(*it));
		if (!it)
			return tfs_seterr(-ENOMEM, "out of memory");
		j->it = it;
		j->cap = ncap;
	}
	it = &j->it[j->n];
	if (!(it->path = strdup(path)))
		return tfs_seterr(-ENOMEM, "out of memory");
	it->from = dev;
	it->moved = 0;
	it->bytes = (uint64_t)st->st_size;
	j->bytes += it->bytes;
	j->n++;
	return 0;
}

static int walk(struct job *j, const char *path, int depth)
{
	struct dirent *e;
	struct stat st;
	DIR *d;
	int rc = 0;

	if (lstat(path, &st))
		return tfs_seterr(-errno, "%s: %s", path, tfs_strerror(errno));
	if (S_ISREG(st.st_mode))
		return add(j, path, &st);
	if (!S_ISDIR(st.st_mode))
		return 0;
	if (depth > MOVE_MAX_DEPTH)
		return tfs_seterr(-ELOOP, "%s: deeper than %d directories", path, MOVE_MAX_DEPTH);
	if (!(d = opendir(path)))
		return tfs_seterr(-errno, "%s: %s", path, tfs_strerror(errno));
	while (rc == 0 && (e = readdir(d))) {
		char sub[PATH_MAX];

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= sizeof(sub))
			rc = tfs_seterr(-ENAMETOOLONG, "%s/%s: name too long", path, e->d_name);
		else
			rc = walk(j, sub, depth + 1);
	}
	closedir(d);
	return rc;
}

static void *worker(void *arg)
{
	struct job *j = arg;

	for (;;) {
		struct item *it;
		int rc;

		pthread_mutex_lock(&j->mu);
		if (j->rc || j->next == j->n) {
			pthread_mutex_unlock(&j->mu);
			return NULL;
		}
		it = &j->it[j->next++];
		pthread_mutex_unlock(&j->mu);
		rc = set_device(it->path, j->device);
		pthread_mutex_lock(&j->mu);
		if (rc && !j->rc) {
			char to[TFS_TIER_NAME_MAX];

			j->rc = rc;
			snprintf(j->why, sizeof(j->why), "%s: move to %s: %s", it->path,
				 tfs_tier_name(j->device, to, sizeof(to)), tfs_strerror(rc));
		} else if (rc == 0) {
			it->moved = 1;
			j->done++;
			j->done_bytes += it->bytes;
			if (j->o && j->o->progress)
				j->o->progress(j->o->arg, j->done, (int)j->n, j->done_bytes,
					       j->bytes);
		}
		pthread_mutex_unlock(&j->mu);
	}
}

/* The moves made go back where they were; the count that could not. */
static int undo(struct job *j, char *first, size_t size)
{
	int failed = 0;

	for (size_t i = 0; i < j->n; i++) {
		int rc;

		if (!j->it[i].moved)
			continue;
		if ((rc = set_device(j->it[i].path, j->it[i].from)) && !failed++)
			snprintf(first, size, "%s: %s", j->it[i].path, tfs_strerror(rc));
	}
	return failed;
}

int tfs_move(const char *path, int device, const struct tfs_move_opts *opts)
{
	struct job j;
	pthread_t th[64];
	int nth, started = 0, rc;

	if (!path || (device < 0 && device != TFS_DEVICE_CPU))
		return tfs_seterr(-EINVAL, "tfs_move: bad argument");
	memset(&j, 0, sizeof(j));
	j.device = device;
	j.o = opts;
	pthread_mutex_init(&j.mu, NULL);
	if ((rc = walk(&j, path, 0)))
		goto out;
	nth = opts && opts->threads > 0 ? opts->threads : 8;
	if (nth > 64)
		nth = 64;
	if ((size_t)nth > j.n)
		nth = (int)j.n;
	for (int i = 0; i < nth; i++)
		if (pthread_create(&th[started], NULL, worker, &j) == 0)
			started++;
	if (!started && j.n)
		worker(&j);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	rc = j.rc;
	if (rc) {
		char first[PATH_MAX + 64] = "";
		int failed = undo(&j, first, sizeof(first));

		if (failed)
			rc = tfs_seterr(-EIO, "%s; %d tensor(s) could not move back, first %s",
					j.why, failed, first);
		else
			rc = tfs_seterr(rc, "%s (nothing moved)", j.why);
	}
out:
	for (size_t i = 0; i < j.n; i++)
		free(j.it[i].path);
	free(j.it);
	pthread_mutex_destroy(&j.mu);
	return rc;
}
