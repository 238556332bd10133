/* tfs_copy: a tensor, or a directory of them, copied into new tensors of the mount dest
 * is on (tensorfs.h). src may be another node's: the daemon then moves its bytes over the
 * network (fs/net/net.h), so this is how a node takes a replica of another's model. Every
 * tensor is made first (dtype and shape of its source), then the bytes move in chunks
 * that several threads keep in flight together; all or nothing: a failure or a cancel
 * removes everything this copy made. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "client_internal.h"
#include "dtype.h"
#include "pull_ioctl.h"
#include "shape.h"
#include "typed.h"

/* A worker's unit: CHUNK_SPAN bytes of one tensor, copied by IO_SIZE reads (the mount's
 * largest read) or pulled by the daemon in one request. */
#define CHUNK_SPAN (16u << 20)
#define IO_SIZE (1u << 20)
#define MAX_ITEMS (1u << 20)
#define MAX_DEPTH 256
#define MAX_THREADS 64

struct item {
	char *src, *dst;
	uint64_t bytes;
	uint64_t ino;                /* the source's, for the pull */
};

struct job {
	struct item *it;
	size_t n, cap;
	const struct tfs_copy_opts *o;
	/* the next chunk, the first failure and the end: under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t next_item;
	uint64_t next_off;
	int failed;
	char why[PATH_MAX + 128];     /* the first failure's message */
	int running;
	uint64_t total, done;         /* done: atomic */
	/* The pull ioctl (core/pull_ioctl.h) when src and dest share a mount: the daemon
	 * fetches another node's bytes itself. pull_off once a daemon said it cannot. */
	size_t mntlen;               /* src's mount point's length; 0: no pull */
	int pull_off;
};

void tfs_copy_opts_init(struct tfs_copy_opts *o)
{
	memset(o, 0, sizeof(*o));
}

static int cancelled(const struct job *j)
{
	return j->o->cancel && *j->o->cancel;
}

static int add_item(struct job *j, const char *src, const char *dst, uint64_t bytes,
		    uint64_t ino)
{
	struct item *x;

	if (j->n == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 64;

		if (cap > MAX_ITEMS)
			return tfs_seterr(-E2BIG, "%s: more than %u tensors", src, MAX_ITEMS);
		if (!(x = realloc(j->it, cap * sizeof(*x))))
			return tfs_seterr(-ENOMEM, "out of memory");
		j->it = x;
		j->cap = cap;
	}
	x = &j->it[j->n];
	x->src = strdup(src);
	x->dst = strdup(dst);
	x->bytes = bytes;
	x->ino = ino;
	if (!x->src || !x->dst) {
		free(x->src);
		free(x->dst);
		return tfs_seterr(-ENOMEM, "out of memory");
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

/* A new tensor at path with src's dtype and shape, on the mount's default device. */
static int make_tensor(const char *path, const struct tfs_meta *m)
{
	char what[1200];
	int fd, rc;

	fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		return tfs_seterr(-errno, "%s: %s", path, tfs_strerror(errno));
	close(fd);
	if ((rc = tfs_set_type(-1, path, m->dtype, &m->shape, NULL, what, sizeof(what)))) {
		rc = tfs_seterr(rc, "%s: %s: %s", path, what, tfs_strerror(-rc));
		unlink(path);
	}
	return rc;
}

/* The metadata of the tensor at path (read by path: 4 KiB is the daemon's most). */
static int read_meta(const char *path, struct tfs_meta *m)
{
	char buf[4096];
	ssize_t n = getxattr(path, "user.tensor.meta", buf, sizeof(buf));

	if (n < 0 && (errno == ENODATA || errno == ENOTSUP))
		return tfs_seterr(-ENODATA, "%s: not a tensor", path);
	if (n < 0)
		return tfs_seterr(-errno, "%s: %s", path, tfs_strerror(errno));
	if (tfs_meta_from_json(buf, (size_t)n, m))
		return tfs_seterr(-EBADMSG, "%s: malformed user.tensor.meta", path);
	return 0;
}

/* Makes dst like src (a tensor, or with recursive a directory tree), adding the tensors
 * to j. */
static int make_like(struct job *j, const char *src, const char *dst, int depth)
{
	struct tfs_meta m;
	struct dirent *e;
	struct stat st;
	DIR *d;
	int rc = 0;

	if (stat(src, &st))
		return tfs_seterr(-errno, "%s: %s", src, tfs_strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		if ((rc = read_meta(src, &m)) || (rc = make_tensor(dst, &m)))
			return rc;
		return add_item(j, src, dst, m.bytes, st.st_ino);
	}
	if (!j->o->recursive)
		return tfs_seterr(-EISDIR, "%s is a directory (recursive copies it)", src);
	if (depth > MAX_DEPTH)
		return tfs_seterr(-ELOOP, "%s: deeper than %d", src, MAX_DEPTH);
	if (mkdir(dst, st.st_mode & 07777))
		return tfs_seterr(-errno, "%s: %s", dst, tfs_strerror(errno));
	copy_dir_xattrs(src, dst);
	if (!(d = opendir(src)))
		return tfs_seterr(-errno, "%s: %s", src, tfs_strerror(errno));
	while (!rc && (e = readdir(d))) {
		char s[PATH_MAX], t[PATH_MAX];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if ((size_t)snprintf(s, sizeof(s), "%s/%s", src, e->d_name) >= sizeof(s) ||
		    (size_t)snprintf(t, sizeof(t), "%s/%s", dst, e->d_name) >= sizeof(t))
			rc = tfs_seterr(-ENAMETOOLONG, "%s/%s: name too long", src, e->d_name);
		else if (cancelled(j))
			rc = tfs_seterr(-EINTR, "cancelled");
		else
			rc = make_like(j, s, t, depth + 1);
	}
	closedir(d);
	return rc;
}

static void moved(struct job *j, uint64_t n)
{
	__atomic_add_fetch(&j->done, n, __ATOMIC_RELAXED);
}

/* Asks dest's daemon to fetch [off, end) of the source itself: 0, 1 when it cannot
 * (then the bytes are read and written here), or the error. */
static int pull(struct job *j, const struct item *it, uint64_t off, uint64_t end, int out)
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
		if (cancelled(j)) {
			rc = tfs_seterr(-EINTR, "cancelled");
		} else if (ioctl(out, TFS_IOC_PULL, q)) {
			if (errno == ENOTTY)
				__atomic_store_n(&j->pull_off, 1, __ATOMIC_RELAXED);
			if (errno == EXDEV || errno == ENOTTY)
				rc = 1;
			else
				rc = tfs_seterr(-errno, "%s: %s", it->src, tfs_strerror(errno));
		} else {
			off += q->len;
			moved(j, q->len);
		}
	}
	free(q);
	return rc;
}

static int copy_range(struct job *j, const struct item *it, uint64_t off, uint64_t end,
		      char *buf)
{
	int in = -1, out = open(it->dst, O_WRONLY | O_CLOEXEC), rc = 0;

	if (out < 0)
		return tfs_seterr(-errno, "%s: %s", it->dst, tfs_strerror(errno));
	if ((rc = pull(j, it, off, end, out)) != 1)
		goto out;
	rc = 0;
	in = open(it->src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		rc = tfs_seterr(-errno, "%s: %s", it->src, tfs_strerror(errno));
		goto out;
	}
	while (off < end && !rc) {
		size_t want = end - off < IO_SIZE ? (size_t)(end - off) : IO_SIZE;
		ssize_t n = pread(in, buf, want, (off_t)off);

		if (cancelled(j))
			rc = tfs_seterr(-EINTR, "cancelled");
		else if (n < 0)
			rc = tfs_seterr(-errno, "%s: %s", it->src, tfs_strerror(errno));
		else if ((size_t)n != want)
			rc = tfs_seterr(-EIO, "%s: shorter than its %llu bytes (changed meanwhile?)",
					it->src, (unsigned long long)it->bytes);
		else if (pwrite(out, buf, want, (off_t)off) != (ssize_t)want)
			rc = tfs_seterr(errno ? -errno : -EIO, "%s: %s", it->dst,
					tfs_strerror(errno ? errno : EIO));
		if (!rc) {
			off += want;
			moved(j, want);
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
		if (!buf && !j->failed) {
			j->failed = -ENOMEM;
			snprintf(j->why, sizeof(j->why), "out of memory");
		}
		while (!j->failed && j->next_item < j->n &&
		       j->next_off >= j->it[j->next_item].bytes) {
			j->next_item++;
			j->next_off = 0;
		}
		if (!j->failed && j->next_item < j->n) {
			it = &j->it[j->next_item];
			off = j->next_off;
			end = it->bytes - off < CHUNK_SPAN ? it->bytes : off + CHUNK_SPAN;
			j->next_off = end;
		}
		pthread_mutex_unlock(&j->mu);
		if (!it)
			break;
		rc = copy_range(j, it, off, end, buf);
		if (rc) {
			/* The message is this thread's: kept for the caller's. */
			pthread_mutex_lock(&j->mu);
			if (!j->failed) {
				j->failed = rc;
				snprintf(j->why, sizeof(j->why), "%s", tfs_errmsg());
			}
			pthread_mutex_unlock(&j->mu);
		}
	}
	free(buf);
	pthread_mutex_lock(&j->mu);
	j->running--;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

/* Runs the workers; the calling thread reports progress about ten times a second. */
static int run(struct job *j)
{
	int threads = j->o->threads > 0 ? j->o->threads : 8, started = 0;
	pthread_t th[MAX_THREADS];
	struct timespec ts;

	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	pthread_mutex_lock(&j->mu);
	for (; started < threads; started++) {
		if (pthread_create(&th[started], NULL, worker, j))
			break;
		j->running++;
	}
	while (j->running > 0) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&j->cv, &j->mu, &ts);
		if (j->running > 0 && j->o->progress) {
			pthread_mutex_unlock(&j->mu);
			j->o->progress(j->o->progress_arg,
				       __atomic_load_n(&j->done, __ATOMIC_RELAXED), j->total);
			pthread_mutex_lock(&j->mu);
		}
	}
	pthread_mutex_unlock(&j->mu);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (!started)
		return tfs_seterr(-EAGAIN, "cannot start a thread");
	if (j->failed)
		return tfs_seterr(j->failed, "%s", j->why);
	if (j->o->progress)
		j->o->progress(j->o->progress_arg, j->done, j->total);
	return 0;
}

struct mount_of {
	const char *abs;
	char best[PATH_MAX];
	size_t bestlen;
	int found;
};

static int longest_prefix(const struct tfs_mount *m, void *arg)
{
	struct mount_of *o = arg;
	size_t n = strlen(m->mp);

	if (strncmp(o->abs, m->mp, n) || (o->abs[n] && o->abs[n] != '/' && n > 1) ||
	    n < o->bestlen)
		return 0;
	o->bestlen = n;
	o->found = !strcmp(m->fstype, "fuse.tensorfs");
	snprintf(o->best, sizeof(o->best), "%s", m->mp);
	return 0;
}

/* The mount point of the tensorfs mount holding the absolute, resolved path abs (the
 * longest mount point that is a prefix of it): 0, -ENOTSUP when that mount is not
 * tensorfs's, or -errno. */
static int mount_of(const char *abs, char *mnt, size_t size)
{
	struct mount_of o = { .abs = abs };
	int rc = tfs_mounts_each(longest_prefix, &o);

	if (rc)
		return tfs_seterr(rc, "/proc/self/mountinfo: %s", tfs_strerror(-rc));
	if (!o.found)
		return tfs_seterr(-ENOTSUP, "%s: not on a tensorfs mount", abs);
	snprintf(mnt, size, "%s", o.best);
	return 0;
}

/* dest's parent resolved, with dest's last name: where dest would be. */
static int resolve_dest(const char *dest_arg, char *out, size_t size)
{
	char dest[PATH_MAX], dir[PATH_MAX], real[PATH_MAX];
	const char *slash, *base;
	size_t n;

	/* "dest/" names dest, as for mkdir(1). */
	if ((n = strlen(dest_arg)) >= sizeof(dest))
		return tfs_seterr(-ENAMETOOLONG, "%s: name too long", dest_arg);
	memcpy(dest, dest_arg, n + 1);
	while (n > 1 && dest[n - 1] == '/')
		dest[--n] = '\0';
	slash = strrchr(dest, '/');
	base = slash ? slash + 1 : dest;

	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return tfs_seterr(-EINVAL, "%s: not a name to make", dest);
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dest)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - dest), dest);
	if (!realpath(dir, real))
		return tfs_seterr(-errno, "%s: %s", dir, tfs_strerror(errno));
	if ((size_t)snprintf(out, size, "%s/%s", strcmp(real, "/") ? real : "", base) >= size)
		return tfs_seterr(-ENAMETOOLONG, "%s: name too long", dest);
	return 0;
}

int tfs_copy(const char *src_arg, const char *dest_arg, const struct tfs_copy_opts *opts)
{
	struct tfs_copy_opts defaults;
	struct job j = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	char src[PATH_MAX], dst[PATH_MAX], smnt[PATH_MAX], dmnt[PATH_MAX];
	struct stat st;
	int rc;

	if (!src_arg || !dest_arg)
		return tfs_seterr(-EINVAL, "tfs_copy: NULL argument");
	if (!opts) {
		tfs_copy_opts_init(&defaults);
		opts = &defaults;
	}
	j.o = opts;
	/* The pull names the source by its path under the mount: canonical from here on. */
	if (!realpath(src_arg, src))
		return tfs_seterr(-errno, "%s: %s", src_arg, tfs_strerror(errno));
	if ((rc = resolve_dest(dest_arg, dst, sizeof(dst))) ||
	    (rc = mount_of(src, smnt, sizeof(smnt))) || (rc = mount_of(dst, dmnt, sizeof(dmnt))))
		return rc;
	if (!strcmp(smnt, dmnt))
		j.mntlen = strlen(smnt);
	if (lstat(dst, &st) == 0)
		return tfs_seterr(-EEXIST, "%s exists", dest_arg);
	if ((size_t)snprintf(smnt, sizeof(smnt), "%s/", src) <= sizeof(smnt) &&
	    !strncmp(dst, smnt, strlen(smnt)))
		return tfs_seterr(-EINVAL, "%s is inside %s", dest_arg, src_arg);
	rc = make_like(&j, src, dst, 0);
	if (!rc)
		rc = run(&j);
	/* All or nothing: what was made goes again (dest did not exist: all of it is ours). */
	if (rc && lstat(dst, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			tfs_rm_tree(dst);
		else
			unlink(dst);
	}
	for (size_t i = 0; i < j.n; i++) {
		free(j.it[i].src);
		free(j.it[i].dst);
	}
	free(j.it);
	return rc;
}
