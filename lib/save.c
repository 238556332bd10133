/* tfs_save: a tensor, or a directory of tensors, into a raw, .npy or .safetensors file
 * (tensorfs.h). The output is written to a temporary file beside it, sized at once, filled
 * by the pipeline's threads (load_pipe.c) and renamed over the name at the end. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "client_internal.h"
#include "dtype.h"
#include "fileio.h"
#include "formats.h"
#include "load_pipe.h"
#include "model_dir.h"

#define META_XATTR "user.safetensors.metadata"
#define MAX_DEPTH 64

/* One tensor of the source: its metadata, read by the walk; the pipeline's preparing
 * threads open it (fd, t) and its finish() closes it again. */
struct src {
	char *name;                    /* relative to the saved directory ("" for one tensor) */
	char *path;
	int fd;                        /* -1 while not open */
	tfs_tensor *t;                 /* NULL: read through fd */
	struct tfs_meta m;
};

struct save {
	const struct tfs_save_opts *o;
	const char *root;
	size_t n, cap;
	struct src *s;
	struct tfs_pipe_item *items;   /* in file order */
	struct src **by_item;          /* the source of items[i] */
	int model;                     /* a model directory's shard: __metadata__ at least
					* {"format":"pt"}, which transformers asks for */
};

void tfs_save_opts_init(struct tfs_save_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->format = TFS_FORMAT_AUTO;
}

/* Adds the tensor at path with its metadata (no descriptor is kept: a directory of
 * thousands of tensors is opened a window at a time). */
static int add_src(struct save *sv, const char *path, const char *name)
{
	struct src *s;
	char buf[4096];
	ssize_t n;
	int rc;

	if (sv->n == sv->cap) {
		size_t cap = sv->cap ? 2 * sv->cap : 16;
		struct src *ns = realloc(sv->s, cap * sizeof(*ns));

		if (!ns)
			return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
		sv->s = ns;
		sv->cap = cap;
	}
	s = &sv->s[sv->n];
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->name = strdup(name);
	s->path = strdup(path);
	sv->n++;
	if (!s->name || !s->path)
		return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
	n = getxattr(path, "user.tensor.meta", buf, sizeof(buf) - 1);
	if (n < 0)
		return tfs_seterr(-errno, "%s: %s", path, tfs_strerror(errno));
	buf[n] = 0;
	if ((rc = tfs_meta_from_json(buf, (size_t)n, &s->m)))
		return tfs_seterr(rc, "%s: malformed user.tensor.meta: %s", path, tfs_strerror(rc));
	return 0;
}

/* The pipeline's prepare(): opens and maps tensor i (opening CUDA handles takes a while:
 * the pipeline's threads do it in parallel, and copy what is mapped meanwhile). Without
 * a mapping here (no libcudart, another node's tensor, via_file) the bytes are read
 * through the file. */
static int map_one(void *arg, size_t i)
{
	struct save *sv = arg;
	struct tfs_pipe_item *it = &sv->items[i];
	struct src *s = sv->by_item[i];
	struct tfs_tensor_info info;
	struct stat st;

	s->fd = open(s->path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0)
		return tfs_seterr(-errno, "%s: %s", s->path, tfs_strerror(errno));
	if (fstat(s->fd, &st))
		return tfs_seterr(-errno, "%s: %s", s->path, tfs_strerror(errno));
	if ((uint64_t)st.st_size != s->m.bytes)
		return tfs_seterr(-EAGAIN, "%s: changed while saving: %s", s->path,
				  tfs_strerror(EAGAIN));
	it->fd = s->fd;
	if (!s->m.bytes || sv->o->via_file || tfs_open_fd(s->fd, &s->t))
		return 0;
	if (s->t->via_fd) {
		/* Another node's bytes, not mapped here: read through the file (the daemon
		 * forwards). */
		tfs_close(s->t);
		s->t = NULL;
		return 0;
	}
	tfs_tensor_get_info(s->t, &info);
	if (info.bytes != s->m.bytes)
		return tfs_seterr(-EAGAIN, "%s: changed while saving: %s", s->path,
				  tfs_strerror(EAGAIN));
	it->t = s->t;
	return 0;
}

/* The pipeline's finish(): tensor i is in the file. */
static void unmap_one(void *arg, size_t i)
{
	struct save *sv = arg;
	struct src *s = sv->by_item[i];

	tfs_close(s->t);
	s->t = NULL;
	sv->items[i].t = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	sv->items[i].fd = -1;
}

static int walk(struct save *sv, const char *rel, int depth)
{
	char path[PATH_MAX * 2], sub[PATH_MAX];
	struct dirent **ents;
	int n, rc = 0;

	snprintf(path, sizeof(path), "%s%s%s", sv->root, *rel ? "/" : "", rel);
	if (depth > MAX_DEPTH)
		return tfs_seterr(-ELOOP, "%s: too deep: %s", path, tfs_strerror(ELOOP));
	n = scandir(path, &ents, NULL, alphasort);
	if (n < 0)
		return tfs_seterr(-errno, "%s: %s", path, tfs_strerror(errno));
	for (int i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;
		char full[PATH_MAX * 2];
		struct stat st;

		if (rc || !strcmp(d, ".") || !strcmp(d, ".."))
			goto next;
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", d) >= sizeof(sub)) {
			rc = tfs_seterr(-ENAMETOOLONG, "%s/%s: %s", path, d, tfs_strerror(ENAMETOOLONG));
			goto next;
		}
		snprintf(full, sizeof(full), "%s/%s", sv->root, sub);
		if (stat(full, &st))
			rc = tfs_seterr(-errno, "%s: %s", full, tfs_strerror(errno));
		else if (S_ISDIR(st.st_mode))
			rc = walk(sv, sub, depth + 1);
		else
			rc = add_src(sv, full, sub);
next:
		free(ents[i]);
	}
	free(ents);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct src *)a)->name, ((const struct src *)b)->name);
}

/* The safetensors header, and each tensor's place in the file (items in header order). */
static int layout_st(struct save *sv, uint8_t **hdr, long *hlen, struct tfs_pipe_item *items)
{
	struct st_header h = { 0 };
	char md[65537];
	ssize_t n;
	int rc = 0;

	h.e = calloc(sv->n ? sv->n : 1, sizeof(*h.e));
	if (!h.e)
		return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
	for (size_t i = 0; i < sv->n; i++) {
		h.e[i] = (struct st_entry){ .name = strdup(sv->s[i].name), .dtype = sv->s[i].m.dtype,
					    .shape = sv->s[i].m.shape };
		h.n++;
		if (!h.e[i].name) {
			rc = tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
			goto out;
		}
	}
	n = getxattr(sv->root, META_XATTR, md, sizeof(md) - 1);
	if (n <= 0 && sv->model)
		n = snprintf(md, sizeof(md), "{\"format\":\"pt\"}");
	if (n > 0) {
		md[n] = 0;
		if (!(h.metadata = strdup(md))) {
			rc = tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
			goto out;
		}
	}
	tfs_st_layout(&h);
	*hlen = tfs_st_format(&h, hdr);
	if (*hlen < 0) {
		rc = tfs_seterr((int)*hlen, "%s: cannot write the header: %s", sv->root,
				tfs_strerror((int)*hlen));
		goto out;
	}
	/* sv->s is sorted by name (walk order with '/' is not strcmp order: sort again) */
	qsort(sv->s, sv->n, sizeof(*sv->s), by_name);
	for (size_t i = 0; i < h.n; i++) {
		struct src key = { .name = h.e[i].name };
		struct src *s = bsearch(&key, sv->s, sv->n, sizeof(*sv->s), by_name);

		sv->by_item[i] = s;
		items[i] = (struct tfs_pipe_item){ .fd = -1, .foff = (uint64_t)*hlen + h.e[i].begin,
						   .bytes = h.e[i].end - h.e[i].begin };
	}
out:
	tfs_st_free(&h);
	return rc;
}

/* Copy threads: the caller's, or else the pipeline's default (load_pipe.c), except into
 * a mapping through the tensors' files, where each thread mostly waits on its FUSE reads
 * while the daemon copies: there twice as many as CPUs, at most 32, keep more reads in
 * flight (tensorctl save on the H200: 32 threads 10.2-10.6 GB/s where 16 gave 8.5-9.4
 * in the same run; 48 and 64 no better than 32; tests/bench/RESULTS-gpu.md). */
static int save_threads(const struct tfs_save_opts *o, int mapped)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (o->threads > 0 || !mapped || !o->via_file)
		return o->threads;
	return cpus > 0 && 2 * cpus < 32 ? (int)(2 * cpus) : 32;
}

/* Whether the output is filled through a shared mapping rather than by pwrite. One file
 * takes buffered writes one at a time (its inode lock), at 3-4 GB/s on the H200's ext4,
 * where threads filling their own stretches of a mapping reach 11-12 (tests/bench/
 * RESULTS-gpu.md). Only on local file systems whose page faults cannot wait on a server,
 * and only once fallocate has given every block, so a write fault never meets ENOSPC
 * (which would be SIGBUS). TFS_SAVE_MMAP=0 writes with pwrite everywhere. */
static int map_output(int fd)
{
	static const long local[] = {
		EXT4_SUPER_MAGIC,          /* ext2/3/4 share it */
		XFS_SUPER_MAGIC,
		(long)BTRFS_SUPER_MAGIC,
		TMPFS_MAGIC,
		(long)F2FS_SUPER_MAGIC,
	};
	const char *env = getenv("TFS_SAVE_MMAP");
	struct statfs sf;

	if (env && !strcmp(env, "0"))
		return 0;
	if (fstatfs(fd, &sf))
		return 0;
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if ((long)sf.f_type == local[i])
			return 1;
	return 0;
}

/* Writes the tensors sv->s (read by walk or add_src) to file in format f, through a
 * temporary file renamed at the end. Closes what it opened; sv->s stays the caller's. */
static int write_file(struct save *sv, const char *file, enum tfs_format f)
{
	const struct tfs_save_opts *opts = sv->o;
	const char *src = sv->root;
	struct tfs_pipe_item *items = NULL;
	struct tfs_pipe p;
	uint8_t *hdr = NULL, nhdr[4096];
	long hlen = 0;
	uint64_t total;
	char tmp[PATH_MAX + 32], *fmap = NULL;
	int rc, out = -1;

	items = calloc(sv->n ? sv->n : 1, sizeof(*items));
	sv->by_item = calloc(sv->n ? sv->n : 1, sizeof(*sv->by_item));
	sv->items = items;
	if (!items || !sv->by_item) {
		rc = tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
		goto out;
	}
	if (f == TFS_FORMAT_SAFETENSORS) {
		if ((rc = layout_st(sv, &hdr, &hlen, items)))
			goto out;
	} else {
		struct src *s = &sv->s[0];

		if (f == TFS_FORMAT_NPY) {
			hlen = tfs_npy_format(s->m.dtype, &s->m.shape, nhdr, sizeof(nhdr));
			if (hlen < 0) {
				rc = tfs_seterr((int)hlen, "%s: dtype %s has no .npy equivalent: %s", src,
						tfs_dtype_name(s->m.dtype), tfs_strerror((int)-hlen));
				goto out;
			}
		}
		sv->by_item[0] = s;
		items[0] = (struct tfs_pipe_item){ .fd = -1, .foff = (uint64_t)hlen,
						   .bytes = s->m.bytes };
	}
	total = (uint64_t)hlen;
	for (size_t i = 0; i < sv->n; i++)
		total += items[i].bytes;
	snprintf(tmp, sizeof(tmp), "%s.tfs-XXXXXX", file);
	out = mkostemp(tmp, O_CLOEXEC);
	if (out < 0) {
		rc = tfs_seterr(-errno, "%s: %s", file, tfs_strerror(errno));
		goto out;
	}
	{
		mode_t um = umask(0);

		umask(um);
		fchmod(out, 0666 & ~um);
	}
	/* sized at once: the threads' writes fill it in place, none extends it */
	errno = 0;
	if (ftruncate(out, (off_t)total) ||
	    (hlen && pwrite(out, hdr ? (void *)hdr : (void *)nhdr, (size_t)hlen, 0) != hlen)) {
		rc = tfs_seterr(errno ? -errno : -EIO, "%s: write: %s", file,
				tfs_strerror(errno ? errno : EIO));
		goto out;
	}
	if (total && map_output(out)) {
		if (!fallocate(out, 0, 0, (off_t)total)) {
			fmap = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_SHARED, out, 0);
			if (fmap == MAP_FAILED)
				fmap = NULL;
			/* Where the file system caches in large folios (ext4 since 6.16, xfs),
			 * the hint makes a fault take 2 MiB at once: 9-10 -> 11-13 GB/s for 8-16
			 * threads on the H200 (RESULTS-gpu.md). Only a hint: EINVAL without THP. */
			else
				(void)madvise(fmap, (size_t)total, MADV_HUGEPAGE);
		} else if (errno == ENOSPC || errno == EFBIG) {
			rc = tfs_seterr(-errno, "%s: %s", file, tfs_strerror(errno));
			goto out;
		}
	}
	p = (struct tfs_pipe){ .fd = out, .fmap = fmap, .fname = file, .to_tensor = 0, .n = sv->n,
			       .items = items, .prepare = map_one, .finish = unmap_one, .arg = sv,
			       .threads = save_threads(opts, fmap != NULL), .progress = opts->progress,
			       .progress_arg = opts->progress_arg, .cancel = opts->cancel };
	rc = tfs_pipe_run(&p);
	if (fmap) {
		munmap(fmap, (size_t)total);
		fmap = NULL;
	}
	if (rc)
		goto out;
	if (rename(tmp, file))
		rc = tfs_seterr(-errno, "%s: %s", file, tfs_strerror(errno));
out:
	{
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", tfs_errmsg());
		if (out >= 0) {
			close(out);
			if (rc)
				unlink(tmp);
		}
		for (size_t i = 0; i < sv->n; i++) {
			tfs_close(sv->s[i].t);
			sv->s[i].t = NULL;
			if (sv->s[i].fd >= 0)
				close(sv->s[i].fd);
			sv->s[i].fd = -1;
		}
		if (rc)
			tfs_seterr(rc, "%s", msg);
	}
	free(sv->by_item);
	sv->by_item = NULL;
	free(items);
	free(hdr);
	return rc;
}

static void free_srcs(struct save *sv)
{
	for (size_t i = 0; i < sv->n; i++) {
		free(sv->s[i].name);
		free(sv->s[i].path);
	}
	free(sv->s);
	sv->s = NULL;
	sv->n = sv->cap = 0;
}

/* ---- a Hugging Face model directory ---- */

static int is_small(const struct src *s)
{
	return tfs_model_small_name(s->name) && s->m.dtype == TFS_U8 && s->m.shape.ndim == 1;
}

/* A directory tfs_load made of a model directory: it holds the index or config.json. */
static int is_model(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, TFS_MODEL_INDEX);
	if (!stat(path, &st) && S_ISREG(st.st_mode))
		return 1;
	snprintf(path, sizeof(path), "%s/config.json", dir);
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* The bytes of a small file's tensor, through its file; malloc'd (plus a NUL). */
static int read_small(const struct src *s, char **out)
{
	char *buf = malloc(s->m.bytes + 1);
	int fd, rc;

	if (!buf)
		return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
	fd = open(s->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = tfs_seterr(-errno, "%s: %s", s->path, tfs_strerror(errno));
		free(buf);
		return rc;
	}
	rc = tfs_pread_full(fd, buf, s->m.bytes, 0);
	close(fd);
	if (rc) {
		free(buf);
		return tfs_seterr(rc == -ENODATA ? -EAGAIN : rc, "%s: read: %s", s->path,
				  tfs_strerror(rc == -ENODATA ? EAGAIN : -rc));
	}
	buf[s->m.bytes] = 0;
	*out = buf;
	return 0;
}

/* Writes len bytes to dir/name through a temporary file renamed over it. */
static int write_bytes(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tfs-XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return tfs_seterr(-errno, "%s: %s", path, tfs_strerror(errno));
	{
		mode_t um = umask(0);

		umask(um);
		fchmod(fd, 0666 & ~um);
	}
	if ((rc = tfs_pwrite_full(fd, buf, len, 0)) == 0 && close(fd))
		rc = -errno;
	else if (rc)
		close(fd);
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return tfs_seterr(rc, "%s: write: %s", path, tfs_strerror(-rc));
	}
	return 0;
}

/* One progress bar across the shards: each file's pipeline reports its own bytes. */
struct model_progress {
	const struct tfs_save_opts *o;
	uint64_t base, total;
};

static void model_progress(void *arg, uint64_t done, uint64_t total)
{
	struct model_progress *mp = arg;

	(void)total;
	mp->o->progress(mp->o->progress_arg, mp->base + done, mp->total);
}

/* sv->root (tensors and small files, as tfs_load makes of a model directory) into the
 * directory dir: the small files back as files, the tensors into safetensors shards as
 * the index assigns them (a tensor it does not name: into its last shard), else into one
 * model.safetensors, and a new index with metadata.total_size. A new dir is written
 * as a temporary directory beside it and renamed at the end; an existing one (replace)
 * gets each file replaced in turn. */
static int save_model(struct save *sv, const char *dir)
{
	struct tfs_model_index idx = { 0 };
	struct tfs_save_opts so = *sv->o;
	struct model_progress mp = { .o = sv->o };
	struct save sub = { 0 };
	char tmpdir[PATH_MAX + 32], why[512], *json = NULL, *text = NULL, *data;
	char **shard_of = NULL, **keys = NULL, **kshard = NULL;
	const char *out = dir, *last = NULL;
	size_t nkeys = 0;
	struct stat st;
	int rc, made = 0;

	tmpdir[0] = 0;
	if ((rc = walk(sv, "", 0)))
		goto out;
	qsort(sv->s, sv->n, sizeof(*sv->s), by_name);
	shard_of = calloc(sv->n + 1, sizeof(*shard_of));
	keys = calloc(sv->n + 1, sizeof(*keys));
	kshard = calloc(sv->n + 1, sizeof(*kshard));
	sub.s = calloc(sv->n + 1, sizeof(*sub.s));
	if (!shard_of || !keys || !kshard || !sub.s) {
		rc = tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
		goto out;
	}
	for (size_t i = 0; i < sv->n; i++) {
		if (strcmp(sv->s[i].name, TFS_MODEL_INDEX) || !is_small(&sv->s[i]))
			continue;
		if ((rc = read_small(&sv->s[i], &json)))
			goto out;
		if ((rc = tfs_model_index_parse(json, sv->s[i].m.bytes, &idx, why, sizeof(why)))) {
			rc = tfs_seterr(rc, "%s: bad index: %s: %s", sv->s[i].path, why,
					tfs_strerror(-rc));
			goto out;
		}
		for (size_t j = 0; j < idx.nshards; j++)
			if (!last || strcmp(idx.shards[j], last) > 0)
				last = idx.shards[j];
	}
	for (size_t i = 0; i < sv->n; i++) {
		const char *sh;

		if (is_small(&sv->s[i]))
			continue;
		sh = json ? tfs_model_index_find(&idx, sv->s[i].name) : TFS_MODEL_SINGLE;
		shard_of[i] = (char *)(sh ? sh : last ? last : TFS_MODEL_SINGLE);
		keys[nkeys] = sv->s[i].name;
		kshard[nkeys++] = shard_of[i];
		mp.total += sv->s[i].m.bytes;
	}
	if (!lstat(dir, &st)) {
		if (!S_ISDIR(st.st_mode)) {
			rc = tfs_seterr(-ENOTDIR, "%s: %s", dir, tfs_strerror(ENOTDIR));
			goto out;
		}
	} else {
		snprintf(tmpdir, sizeof(tmpdir), "%s.tfs-XXXXXX", dir);
		if (!mkdtemp(tmpdir)) {
			rc = tfs_seterr(-errno, "%s: %s", dir, tfs_strerror(errno));
			goto out;
		}
		made = 1;
		out = tmpdir;
		{
			mode_t um = umask(0);

			umask(um);
			chmod(tmpdir, 0777 & ~um);
		}
	}
	sub.o = &so;
	sub.root = sv->root;
	sub.model = 1;
	if (sv->o->progress) {
		so.progress = model_progress;
		so.progress_arg = &mp;
	}
	/* each shard in turn: the tensors whose shard it is */
	for (size_t i = 0; i < sv->n; i++) {
		const char *sh = shard_of[i];
		char path[PATH_MAX * 2];
		int seen = 0;

		if (!sh)
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen = shard_of[k] && !strcmp(shard_of[k], sh);
		if (seen)
			continue;
		sub.n = 0;
		for (size_t k = i; k < sv->n; k++)
			if (shard_of[k] && !strcmp(shard_of[k], sh))
				sub.s[sub.n++] = sv->s[k];
		snprintf(path, sizeof(path), "%s/%s", out, sh);
		rc = write_file(&sub, path, TFS_FORMAT_SAFETENSORS);
		for (size_t k = 0; k < sub.n; k++)
			mp.base += sub.s[k].m.bytes;
		if (rc)
			goto out;
	}
	for (size_t i = 0; i < sv->n; i++) {
		if (!is_small(&sv->s[i]) || (json && !strcmp(sv->s[i].name, TFS_MODEL_INDEX)))
			continue;
		if ((rc = read_small(&sv->s[i], &data)))
			goto out;
		rc = write_bytes(out, sv->s[i].name, data, sv->s[i].m.bytes);
		free(data);
		if (rc)
			goto out;
	}
	if (json) {
		rc = tfs_model_index_format(json, strlen(json), mp.total, nkeys, keys, kshard, &text);
		if (rc) {
			rc = tfs_seterr(rc, "%s/%s: cannot write the index: %s", dir, TFS_MODEL_INDEX,
					tfs_strerror(-rc));
			goto out;
		}
		if ((rc = write_bytes(out, TFS_MODEL_INDEX, text, strlen(text))))
			goto out;
	}
	if (made && rename(tmpdir, dir))
		rc = tfs_seterr(-errno, "%s: %s", dir, tfs_strerror(errno));
	else
		made = 0;
out:
	if (made) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", tfs_errmsg());
		tfs_rm_tree(tmpdir);
		tfs_seterr(rc, "%s", msg);
	}
	tfs_model_index_free(&idx);
	free(json);
	free(text);
	free(shard_of);
	free(keys);
	free(kshard);
	free(sub.s);
	free_srcs(sv);
	return rc;
}

int tfs_save(const char *src, const char *file, const struct tfs_save_opts *opts)
{
	struct tfs_save_opts defaults;
	struct save sv = { 0 };
	enum tfs_format f;
	struct stat st;
	int rc;

	if (!opts) {
		tfs_save_opts_init(&defaults);
		opts = &defaults;
	}
	sv.o = opts;
	sv.root = src;
	if (!src || !file || !*file)
		return tfs_seterr(-EINVAL, "tfs_save: NULL or empty argument");
	if (stat(src, &st))
		return tfs_seterr(-errno, "%s: %s", src, tfs_strerror(errno));
	f = opts->format;
	if (f == TFS_FORMAT_AUTO) {
		size_t n = strlen(file);

		if (S_ISDIR(st.st_mode) && !(n > 12 && !strcmp(file + n - 12, ".safetensors")) &&
		    is_model(src))
			f = TFS_FORMAT_MODEL_DIR;
		else if (S_ISDIR(st.st_mode) || (n > 12 && !strcmp(file + n - 12, ".safetensors")))
			f = TFS_FORMAT_SAFETENSORS;
		else if (n > 4 && !strcmp(file + n - 4, ".npy"))
			f = TFS_FORMAT_NPY;
		else
			f = TFS_FORMAT_RAW;
	}
	if ((unsigned)f > TFS_FORMAT_MODEL_DIR)
		return tfs_seterr(-EINVAL, "format %d: unknown: %s", (int)f, tfs_strerror(EINVAL));
	if (!!S_ISDIR(st.st_mode) != (f == TFS_FORMAT_SAFETENSORS || f == TFS_FORMAT_MODEL_DIR))
		return tfs_seterr(-EINVAL, "%s: %s: %s", src, S_ISDIR(st.st_mode) ?
				  "a directory saves only as safetensors or a model directory" :
				  "a single tensor saves as raw or npy", tfs_strerror(EINVAL));
	if (!opts->replace && !lstat(file, &st))
		return tfs_seterr(-EEXIST, "%s: %s", file, tfs_strerror(EEXIST));
	if (f == TFS_FORMAT_MODEL_DIR)
		return save_model(&sv, file);
	rc = f == TFS_FORMAT_SAFETENSORS ? walk(&sv, "", 0) : add_src(&sv, src, "");
	if (!rc)
		rc = write_file(&sv, file, f);
	free_srcs(&sv);
	return rc;
}
