/* tensorctl cp: copies a tensor, or a directory of them (-r), into new tensors of the
 * mount DEST is on. SRC may be another node's (the daemon then moves its bytes over the
 * network, fs/net/net.h), so this is how a node takes a replica of another's model.
 * Every tensor is made first (dtype and shape of its source), then the bytes move in
 * chunks that several threads keep in flight together; all or nothing: a failure or an
 * interrupt removes everything this copy made. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ctl.h"
#include "pull_ioctl.h"

/* A worker's unit: CHUNK_SPAN bytes of one tensor, copied by IO_SIZE reads (the mount's
 * largest read). */
#define CHUNK_SPAN (16u << 20)
#define IO_SIZE (1u << 20)
#define MAX_ITEMS (1u << 20)

struct item {
	char *src, *dst;
	uint64_t bytes;
	uint64_t ino;                /* the source's, for the pull */
};

struct job {
	struct item *it;
	size_t n, cap;
	/* the next chunk: under mu */
	pthread_mutex_t mu;
	size_t next_item;
	uint64_t next_off;
	int failed;                   /* first failure's rc, under mu */
	struct progress *bar;
	uint64_t total;
	/* The pull ioctl (core/pull_ioctl.h) when SRC and DEST share a mount: the daemon
	 * fetches another node's bytes itself. pull_off once a daemon said it cannot. */
	size_t mntlen;               /* SRC's mount point's length; 0: no pull */
	int pull_off;
};

static int add_item(struct job *j, const char *src, const char *dst, uint64_t bytes,
		    uint64_t ino)
{
	if (j->n == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 64;
		struct item *it;

		if (cap > MAX_ITEMS)
			return err(-E2BIG, "more than %u tensors", MAX_ITEMS);
		it = realloc(j->it, cap * sizeof(*it));
		if (!it)
			return err(-ENOMEM, "out of memory");
		j->it = it;
		j->cap = cap;
	}
	j->it[j->n].src = strdup(src);
	j->it[j->n].dst = strdup(dst);
	j->it[j->n].bytes = bytes;
	j->it[j->n].ino = ino;
	if (!j->it[j->n].src || !j->it[j->n].dst) {
		free(j->it[j->n].src);
		free(j->it[j->n].dst);
		return err(-ENOMEM, "out of memory");
	}
	j->n++;
	j->total += bytes;
	return 0;
}

/* Copies user.safetensors.metadata and the like: a directory's own user attributes
 * (those of user.tensor.* are the daemon's). Best effort. */
static void copy_dir_xattrs(const char *src, const char *dst)
{
	char names[4096], val[65536];
	ssize_t n = listxattr(src, names, sizeof(names));

	for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(names + i) + 1) {
		const char *k = names + i;
		ssize_t v;

		if (strncmp(k, "user.", 5) || !strncmp(k, "user.tensor.", 12) ||
		    !strncmp(k, "user.tensorfs.", 14))
			continue;
		v = getxattr(src, k, val, sizeof(val));
		if (v >= 0)
			setxattr(dst, k, val, (size_t)v, 0);
	}
}

/* Makes dst like src (a tensor, or with recurse a directory tree), adding the tensors to
 * j. */
static int make_like(struct job *j, const char *src, const char *dst, int recurse, int depth)
{
	struct stat st;
	struct tfs_meta m;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (stat(src, &st))
		return err(-errno, "%s: %s", src, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		if ((rc = read_meta(src, &m, NULL)))
			return rc;
		if ((rc = make_tensor(dst, m.dtype, &m.shape, -1)))
			return rc;
		return add_item(j, src, dst, m.bytes, st.st_ino);
	}
	if (!recurse)
		return err(-EISDIR, "%s is a directory (use -r)", src);
	if (depth > 256)
		return err(-ELOOP, "%s: too deep", src);
	if (mkdir(dst, st.st_mode & 07777))
		return err(-errno, "%s: %s", dst, strerror(errno));
	copy_dir_xattrs(src, dst);
	if (!(d = opendir(src)))
		return err(-errno, "%s: %s", src, strerror(errno));
	while (!rc && (e = readdir(d))) {
		char s[PATH_MAX], t[PATH_MAX];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if ((size_t)snprintf(s, sizeof(s), "%s/%s", src, e->d_name) >= sizeof(s) ||
		    (size_t)snprintf(t, sizeof(t), "%s/%s", dst, e->d_name) >= sizeof(t))
			rc = err(-ENAMETOOLONG, "%s/%s: name too long", src, e->d_name);
		else
			rc = make_like(j, s, t, recurse, depth + 1);
	}
	closedir(d);
	return rc;
}

/* Asks DEST's daemon to fetch [off, end) of the source itself: 0, 1 when it cannot
 * (then read and write it here), or the error. */
static int pull(const struct item *it, uint64_t off, uint64_t end, int out, struct job *j)
{
	struct tfs_pull_req *q;
	const char *rel = it->src + j->mntlen;
	int rc = 0;

	if (!j->mntlen || __atomic_load_n(&j->pull_off, __ATOMIC_RELAXED))
		return 1;
	while (*rel == '/')
		rel++;
	if (strlen(rel) > TFS_PULL_PATH || !(q = calloc(1, sizeof(*q))))
		return 1;
	q->ino = it->ino;
	q->pathlen = (uint32_t)strlen(rel);
	memcpy(q->path, rel, q->pathlen);
	while (off < end && !rc) {
		q->src_off = q->dst_off = off;
		q->len = end - off < TFS_PULL_MAX ? end - off : TFS_PULL_MAX;
		if (ctl_interrupted) {
			rc = err(-EINTR, "interrupted");
		} else if (ioctl(out, TFS_IOC_PULL, q)) {
			if (errno == EXDEV || errno == ENOTTY)
				rc = 1;
			else
				rc = err(-errno, "%s: %s", it->src, strerror(errno));
			if (errno == ENOTTY)
				__atomic_store_n(&j->pull_off, 1, __ATOMIC_RELAXED);
		} else {
			off += q->len;
			pthread_mutex_lock(&j->mu);
			progress_add(j->bar, q->len);
			pthread_mutex_unlock(&j->mu);
		}
	}
	free(q);
	return rc;
}

static int copy_range(const struct item *it, uint64_t off, uint64_t end, char *buf,
		      struct job *j)
{
	int in = -1, out = open(it->dst, O_WRONLY | O_CLOEXEC), rc = 0;

	if (out < 0)
		return err(-errno, "%s: %s", it->dst, strerror(errno));
	if ((rc = pull(it, off, end, out, j)) != 1)
		goto out;
	rc = 0;
	in = open(it->src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		rc = err(-errno, "%s: %s", it->src, strerror(errno));
		goto out;
	}
	while (off < end && !rc) {
		size_t want = end - off < IO_SIZE ? (size_t)(end - off) : IO_SIZE;
		ssize_t n = pread(in, buf, want, (off_t)off);

		if (ctl_interrupted)
			rc = err(-EINTR, "interrupted");
		else if (n < 0)
			rc = err(-errno, "%s: %s", it->src, strerror(errno));
		else if ((size_t)n != want)
			rc = err(-EIO, "%s: shorter than its %llu bytes (changed meanwhile?)",
				 it->src, (unsigned long long)it->bytes);
		else if (pwrite(out, buf, want, (off_t)off) != (ssize_t)want)
			rc = err(errno ? -errno : -EIO, "%s: %s", it->dst, strerror(errno));
		if (!rc) {
			off += want;
			pthread_mutex_lock(&j->mu);
			progress_add(j->bar, want);
			pthread_mutex_unlock(&j->mu);
		}
	}
out:
	close(out);
	if (in >= 0)
		close(in);
	return rc;
}

static void *worker(void *arg)
{
	struct job *j = arg;
	char *buf = malloc(IO_SIZE);

	for (;;) {
		const struct item *it = NULL;
		uint64_t off = 0, end = 0;
		int rc;

		pthread_mutex_lock(&j->mu);
		while (!j->failed && buf && j->next_item < j->n &&
		       j->next_off >= j->it[j->next_item].bytes) {
			j->next_item++;
			j->next_off = 0;
		}
		if (!buf && !j->failed)
			j->failed = err(-ENOMEM, "out of memory");
		if (!j->failed && j->next_item < j->n) {
			it = &j->it[j->next_item];
			off = j->next_off;
			end = it->bytes - off < CHUNK_SPAN ? it->bytes : off + CHUNK_SPAN;
			j->next_off = end;
		}
		pthread_mutex_unlock(&j->mu);
		if (!it)
			break;
		rc = copy_range(it, off, end, buf, j);
		if (rc) {
			pthread_mutex_lock(&j->mu);
			if (!j->failed)
				j->failed = rc;
			pthread_mutex_unlock(&j->mu);
		}
	}
	free(buf);
	return NULL;
}

int ctl_copy(const char *src_arg, const char *dst_arg, int recurse, int quiet, int threads)
{
	struct job j = { .mu = PTHREAD_MUTEX_INITIALIZER };
	char src[PATH_MAX], dst[PATH_MAX], smnt[PATH_MAX], dmnt[PATH_MAX], smnt_src[PATH_MAX];
	pthread_t th[64];
	int started = 0, rc;
	struct stat st;

	if (threads < 1 || threads > 64)
		threads = 8;
	ctl_path(src_arg, src, sizeof(src));
	ctl_path(dst_arg, dst, sizeof(dst));
	if ((rc = on_tensorfs(src, smnt, sizeof(smnt))) ||
	    (rc = on_tensorfs(dst, dmnt, sizeof(dmnt))))
		return rc;
	/* The pull names the source by its path under the mount: canonical from here on. */
	if (realpath(src, smnt_src))
		snprintf(src, sizeof(src), "%s", smnt_src);
	if (!strcmp(smnt, dmnt) && !strncmp(src, smnt, strlen(smnt)) &&
	    (src[strlen(smnt)] == '/' || !src[strlen(smnt)]))
		j.mntlen = strlen(smnt);
	if (lstat(dst, &st) == 0)
		return err(-EEXIST, "%s exists", dst);
	rc = make_like(&j, src, dst, recurse, 0);
	if (!rc) {
		j.bar = progress_start("cp", j.total, quiet);
		for (; started < threads; started++)
			if (pthread_create(&th[started], NULL, worker, &j))
				break;
		if (!started)
			rc = err(-EAGAIN, "cannot start a thread");
		for (int i = 0; i < started; i++)
			pthread_join(th[i], NULL);
		if (!rc)
			rc = j.failed;
		progress_end(j.bar);
	}
	/* All or nothing: what was made goes again (only when DEST is ours: it did not exist). */
	if (rc && lstat(dst, &st) == 0)
		remove_tree(dst);
	for (size_t i = 0; i < j.n; i++) {
		free(j.it[i].src);
		free(j.it[i].dst);
	}
	free(j.it);
	return rc;
}

int cmd_cp(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "recursive", no_argument, NULL, 'r' }, { "quiet", no_argument, NULL, 'q' },
		{ "threads", required_argument, NULL, 'j' }, { NULL, 0, NULL, 0 } };
	int recurse = 0, quiet = 0, threads = 8, c;

	if (want_help(argc, argv))
		return 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "rqj:", lo, NULL)) != -1) {
		if (c == 'r')
			recurse = 1;
		else if (c == 'q')
			quiet = 1;
		else if (c == 'j') {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || v < 1 || v > 64)
				return usage_error("-j '%s': expected 1 to 64", optarg);
			threads = (int)v;
		} else {
			return usage_error("unknown option");
		}
	}
	if (argc - optind != 2)
		return usage_error("expected SRC and DEST");
	return ctl_copy(argv[optind], argv[optind + 1], recurse, quiet, threads);
}
