/* tfs_load: a raw, .npy or .safetensors file into tensors (tensorfs.h). The whole file is
 * checked before anything is made; then the tensors are made by the pipeline's preparing
 * threads while its copy threads fill those already made (load_pipe.c). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "client_internal.h"
#include "dtype.h"
#include "fileio.h"
#include "formats.h"
#include "load_pipe.h"

#define META_XATTR "user.safetensors.metadata"

struct spec {
	char *path;
	tfs_dtype dtype;
	struct tfs_shape shape;
};

struct load {
	const struct tfs_load_opts *o;
	const char *file, *dest;
	int fd;
	uint64_t size;
	int is_dir;                    /* safetensors: dest is a directory */
	int made_dir;                  /* dest was created as a directory */
	char *metadata;                /* safetensors "__metadata__", or NULL */
	size_t n;
	struct spec *spec;
	struct tfs_pipe_item *items;
	int *made;                     /* made[i]: spec[i].path was created */
};

void tfs_load_opts_init(struct tfs_load_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->format = TFS_FORMAT_AUTO;
	o->dtype = TFS_U8;
	o->ndim = -1;
	o->device = -1;
	o->via_file = 1;
}

static int read_at(struct load *l, void *buf, size_t n, uint64_t off)
{
	int rc = tfs_pread_full(l->fd, buf, n, off);

	if (rc == -ENODATA)
		return tfs_seterr(-EBADMSG, "%s: truncated: %s", l->file, tfs_strerror(EBADMSG));
	if (rc)
		return tfs_seterr(rc, "%s: read: %s", l->file, tfs_strerror(-rc));
	return 0;
}

static int add(struct load *l, const char *name, tfs_dtype dt, const struct tfs_shape *sh,
	       uint64_t foff, uint64_t bytes)
{
	struct spec *s = &l->spec[l->n];
	int n;

	if (name)
		n = asprintf(&s->path, "%s/%s", l->dest, name);
	else
		n = asprintf(&s->path, "%s", l->dest);
	if (n < 0) {
		s->path = NULL;
		return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
	}
	s->dtype = dt;
	s->shape = *sh;
	l->items[l->n] = (struct tfs_pipe_item){ .fd = -1, .foff = foff, .bytes = bytes };
	l->n++;
	return 0;
}

static int alloc_specs(struct load *l, size_t n)
{
	l->spec = calloc(n ? n : 1, sizeof(*l->spec));
	l->items = calloc(n ? n : 1, sizeof(*l->items));
	l->made = calloc(n ? n : 1, sizeof(*l->made));
	if (!l->spec || !l->items || !l->made)
		return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
	return 0;
}

static int plan_st(struct load *l)
{
	struct st_header h = { 0 };
	uint8_t first[8];
	uint64_t hlen;
	char *json = NULL, why[512];
	int rc;

	if (l->size < 8 || read_at(l, first, 8, 0))
		return tfs_seterr(-EBADMSG, "%s: not a safetensors file (shorter than 8 bytes): %s",
				  l->file, tfs_strerror(EBADMSG));
	if ((rc = tfs_st_header_len(first, l->size, &hlen))) {
		uint64_t v = 0;

		for (int i = 7; i >= 0; i--)
			v = v << 8 | first[i];
		return tfs_seterr(rc, "%s: header length %llu does not fit the file (%llu bytes): %s",
				  l->file, (unsigned long long)v, (unsigned long long)l->size,
				  tfs_strerror(rc));
	}
	if (!(json = malloc(hlen ? hlen : 1)))
		return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
	if ((rc = read_at(l, json, hlen, 8)))
		goto out;
	if ((rc = tfs_st_parse(json, hlen, l->size - 8 - hlen, &h, why, sizeof(why)))) {
		rc = tfs_seterr(rc, "%s: bad safetensors header: %s: %s", l->file, why,
				tfs_strerror(rc));
		goto out;
	}
	if ((rc = alloc_specs(l, h.n)))
		goto out;
	for (size_t i = 0; i < h.n; i++) {
		const struct st_entry *e = &h.e[i];

		if (tfs_name_check(e->name)) {
			rc = tfs_seterr(-EINVAL, "%s: tensor name '%s' cannot be a file name: %s",
					l->file, e->name, tfs_strerror(EINVAL));
			goto out;
		}
		if ((rc = add(l, e->name, e->dtype, &e->shape, 8 + hlen + e->begin,
			      e->end - e->begin)))
			goto out;
	}
	l->is_dir = 1;
	l->metadata = h.metadata;
	h.metadata = NULL;
out:
	tfs_st_free(&h);
	free(json);
	return rc;
}

static int plan_npy(struct load *l, const uint8_t *head, size_t nhead)
{
	struct npy_info ni;
	uint64_t hs;
	uint8_t *hb;
	char why[256];
	int rc;

	if (tfs_npy_header_size(head, nhead, &hs) || hs > l->size || hs > (16u << 20))
		return tfs_seterr(-EBADMSG, "%s: not an .npy file, or its header is truncated: %s",
				  l->file, tfs_strerror(EBADMSG));
	if (!(hb = malloc(hs)))
		return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
	rc = read_at(l, hb, hs, 0);
	if (!rc && (rc = tfs_npy_parse(hb, hs, &ni, why, sizeof(why))))
		rc = tfs_seterr(rc, "%s: bad .npy header: %s: %s", l->file, why, tfs_strerror(rc));
	free(hb);
	if (rc)
		return rc;
	if (l->size - ni.data_off != ni.bytes)
		return tfs_seterr(-EBADMSG, "%s: %s: header says %llu bytes of data, file has %llu: %s",
				  l->file, l->size - ni.data_off < ni.bytes ? "truncated" : "oversized",
				  (unsigned long long)ni.bytes,
				  (unsigned long long)(l->size - ni.data_off), tfs_strerror(EBADMSG));
	if ((rc = alloc_specs(l, 1)))
		return rc;
	return add(l, NULL, ni.dtype, &ni.shape, ni.data_off, ni.bytes);
}

static int plan_raw(struct load *l)
{
	const struct tfs_load_opts *o = l->o;
	size_t isz;
	struct tfs_shape sh = { 0 };
	uint64_t bytes;
	char shs[512] = "";
	int rc;

	if ((unsigned)o->dtype >= TFS_DTYPE_COUNT || o->ndim > TFS_MAX_DIMS)
		return tfs_seterr(-EINVAL, "%s: bad dtype or shape in the options: %s", l->file,
				  tfs_strerror(EINVAL));
	isz = tfs_dtype_size(o->dtype);
	if (o->ndim < 0) {
		if (l->size % isz)
			return tfs_seterr(-EINVAL, "%s: %llu bytes is not a whole number of %s: %s",
					  l->file, (unsigned long long)l->size,
					  tfs_dtype_name(o->dtype), tfs_strerror(EINVAL));
		tfs_shape_1d(&sh, l->size / isz);
	} else {
		sh.ndim = o->ndim;
		for (int i = 0; i < o->ndim; i++) {
			if (o->shape[i] < 0)
				return tfs_seterr(-EINVAL, "%s: negative dimension: %s", l->file,
						  tfs_strerror(EINVAL));
			sh.dims[i] = (uint64_t)o->shape[i];
		}
	}
	tfs_shape_format(&sh, shs, sizeof(shs));
	if (tfs_shape_bytes(&sh, isz, &bytes) || bytes != l->size)
		return tfs_seterr(-EINVAL, "%s: file has %llu bytes, %s %s needs %llu: %s", l->file,
				  (unsigned long long)l->size, tfs_dtype_name(o->dtype), shs,
				  (unsigned long long)bytes, tfs_strerror(EINVAL));
	if ((rc = alloc_specs(l, 1)))
		return rc;
	return add(l, NULL, o->dtype, &sh, 0, bytes);
}

static int plan(struct load *l)
{
	enum tfs_format f = l->o->format;
	uint8_t head[16] = { 0 };
	size_t nhead = l->size < sizeof(head) ? (size_t)l->size : sizeof(head);
	int rc;

	if (nhead && (rc = read_at(l, head, nhead, 0)))
		return rc;
	if (f == TFS_FORMAT_AUTO) {
		size_t n = strlen(l->file);
		uint64_t hs;

		if (nhead >= 6 && !memcmp(head, "\x93NUMPY", 6))
			f = TFS_FORMAT_NPY;
		else if (l->size > 9 && !tfs_st_header_len(head, l->size, &hs) && head[8] == '{')
			f = TFS_FORMAT_SAFETENSORS;
		else if (n > 4 && !strcmp(l->file + n - 4, ".npy"))
			f = TFS_FORMAT_NPY;
		else if (n > 12 && !strcmp(l->file + n - 12, ".safetensors"))
			f = TFS_FORMAT_SAFETENSORS;
		else
			f = TFS_FORMAT_RAW;
	}
	switch (f) {
	case TFS_FORMAT_SAFETENSORS: return plan_st(l);
	case TFS_FORMAT_NPY: return plan_npy(l, head, nhead);
	case TFS_FORMAT_RAW: return plan_raw(l);
	default:
		return tfs_seterr(-EINVAL, "format %d: unknown: %s", (int)f, tfs_strerror(EINVAL));
	}
}

static void parent_of(const char *path, char *out, size_t size)
{
	char *s;

	snprintf(out, size, "%s", path);
	s = strrchr(out, '/');
	if (!s)
		snprintf(out, size, ".");
	else if (s == out)
		s[1] = 0;
	else
		*s = 0;
}

static int check_space(struct load *l)
{
	char parent[PATH_MAX];
	struct statvfs sv;
	uint64_t need = 0, freeb;

	for (size_t i = 0; i < l->n; i++)
		need += l->items[i].bytes;
	parent_of(l->dest, parent, sizeof(parent));
	if (statvfs(parent, &sv))
		return 0;
	freeb = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (need <= freeb)
		return 0;
	return tfs_seterr(-ENOSPC, "%s: needs %llu bytes, the device has %llu free: %s", l->dest,
			  (unsigned long long)need, (unsigned long long)freeb, tfs_strerror(ENOSPC));
}

/* Directories: dest itself, its metadata, and those names with '/' need. */
static int make_dirs(struct load *l)
{
	size_t skip = strlen(l->dest) + 1;

	if (mkdir(l->dest, 0755))
		return tfs_seterr(-errno, "%s: %s", l->dest, tfs_strerror(errno));
	l->made_dir = 1;
	if (l->metadata && setxattr(l->dest, META_XATTR, l->metadata, strlen(l->metadata), 0))
		return tfs_seterr(-errno, "%s: keep __metadata__ as %s: %s", l->dest, META_XATTR,
				  tfs_strerror(errno));
	for (size_t i = 0; i < l->n; i++) {
		char *path = l->spec[i].path;

		for (char *s = path + skip; (s = strchr(s, '/')); s++) {
			*s = 0;
			if (mkdir(path, 0755) && errno != EEXIST) {
				int e = errno;

				*s = '/';
				return tfs_seterr(-e, "%s: %s", path, tfs_strerror(e));
			}
			*s = '/';
		}
	}
	return 0;
}

/* The pipeline's prepare(): creates, shapes and opens tensor i. */
static int make_one(void *arg, size_t i)
{
	struct load *l = arg;
	struct spec *s = &l->spec[i];
	struct tfs_pipe_item *it = &l->items[i];
	const char *dn = tfs_dtype_name(s->dtype);
	char shape[1024], dev[16];
	tfs_tensor *t;
	int fd, rc;

	fd = open(s->path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0644);
	if (fd < 0)
		return tfs_seterr(-errno, "%s: %s", s->path, tfs_strerror(errno));
	l->made[i] = 1;
	if (l->o->device >= 0) {
		snprintf(dev, sizeof(dev), "%d", l->o->device);
		if (fsetxattr(fd, "user.tensor.device", dev, strlen(dev), 0)) {
			rc = tfs_seterr(-errno, "%s: device %d: %s", s->path, l->o->device,
					tfs_strerror(errno));
			goto fail;
		}
	}
	if (fsetxattr(fd, "user.tensor.dtype", dn, strlen(dn), 0)) {
		rc = tfs_seterr(-errno, "%s: dtype %s: %s", s->path, dn, tfs_strerror(errno));
		goto fail;
	}
	if (tfs_shape_format(&s->shape, shape, sizeof(shape)) < 0) {
		rc = tfs_seterr(-ENAMETOOLONG, "%s: shape: %s", s->path, tfs_strerror(ENAMETOOLONG));
		goto fail;
	}
	if (fsetxattr(fd, "user.tensor.shape", shape, strlen(shape), 0)) {
		rc = tfs_seterr(-errno, "%s: allocate %s %s (%llu bytes): %s", s->path, dn, shape,
				(unsigned long long)it->bytes, tfs_strerror(errno));
		goto fail;
	}
	if (it->bytes && !l->o->via_file && !tfs_open_fd(fd, &t)) {
		struct tfs_tensor_info info;

		tfs_tensor_get_info(t, &info);
		if (info.bytes != it->bytes) {
			tfs_close(t);
			rc = tfs_seterr(-EIO, "%s: made %llu bytes, expected %llu: %s", s->path,
					(unsigned long long)info.bytes,
					(unsigned long long)it->bytes, tfs_strerror(EIO));
			goto fail;
		}
		close(fd);
		it->t = t;
		return 0;
	}
	/* Not mappable here (no libcudart, another node's memory): through the file. The
	 * kernel still has the size of the create (0) and lets writes past the size it knows
	 * through one at a time; the stat makes it ask the daemon (the reshape dropped its
	 * copy), so the copy threads' writes go in together. */
	if (it->bytes) {
		struct stat st;

		if (fstat(fd, &st)) {
			rc = tfs_seterr(-errno, "%s: %s", s->path, tfs_strerror(errno));
			goto fail;
		}
		if ((uint64_t)st.st_size != it->bytes) {
			rc = tfs_seterr(-EIO, "%s: made %llu bytes, expected %llu: %s", s->path,
					(unsigned long long)st.st_size,
					(unsigned long long)it->bytes, tfs_strerror(EIO));
			goto fail;
		}
	}
	it->fd = fd;
	return 0;
fail:
	close(fd);
	return rc;
}

/* The pipeline's finish(): tensor i is full; its mapping and descriptor go now, so a file
 * of thousands of tensors never holds them all open. */
static void done_one(void *arg, size_t i)
{
	struct load *l = arg;

	tfs_close(l->items[i].t);
	l->items[i].t = NULL;
	if (l->items[i].fd >= 0)
		close(l->items[i].fd);
	l->items[i].fd = -1;
}

static int rm_one(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP || type == FTW_D)
		rmdir(p);
	else
		unlink(p);
	return 0;
}

static void release(struct load *l, int failed)
{
	int made_dir = l->made_dir;

	for (size_t i = 0; i < l->n; i++) {
		tfs_close(l->items[i].t);
		if (l->items[i].fd >= 0)
			close(l->items[i].fd);
		if (failed && !made_dir && l->made[i])
			unlink(l->spec[i].path);
		free(l->spec[i].path);
	}
	if (failed && made_dir)
		nftw(l->dest, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(l->spec);
	free(l->items);
	free(l->made);
	free(l->metadata);
}

int tfs_load(const char *file, const char *dest, const struct tfs_load_opts *opts)
{
	struct tfs_load_opts defaults;
	struct load l = { .file = file, .dest = dest, .fd = -1 };
	struct tfs_pipe p = { 0 };
	struct stat st;
	int rc;

	if (!opts) {
		tfs_load_opts_init(&defaults);
		opts = &defaults;
	}
	l.o = opts;
	if (!file || !dest || !*dest)
		return tfs_seterr(-EINVAL, "tfs_load: NULL or empty argument");
	if (!lstat(dest, &st))
		return tfs_seterr(-EEXIST, "%s: %s", dest, tfs_strerror(EEXIST));
	l.fd = open(file, O_RDONLY | O_CLOEXEC);
	if (l.fd < 0)
		return tfs_seterr(-errno, "%s: %s", file, tfs_strerror(errno));
	if (fstat(l.fd, &st) || !S_ISREG(st.st_mode)) {
		rc = tfs_seterr(-EINVAL, "%s: not a regular file: %s", file, tfs_strerror(EINVAL));
		goto out;
	}
	l.size = (uint64_t)st.st_size;
	if ((rc = plan(&l)) || (rc = check_space(&l)))
		goto out;
	if (l.is_dir && (rc = make_dirs(&l)))
		goto out;
	p = (struct tfs_pipe){ .fd = l.fd, .fname = file, .to_tensor = 1, .n = l.n,
			       .items = l.items, .prepare = make_one, .finish = done_one, .arg = &l,
			       .threads = opts->threads, .progress = opts->progress,
			       .progress_arg = opts->progress_arg, .cancel = opts->cancel,
			       .via_file = opts->via_file };
	rc = tfs_pipe_run(&p);
out:
	{
		/* release() closes the tensors: keep the failure's message across it */
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", tfs_errmsg());
		release(&l, rc != 0);
		if (rc)
			tfs_seterr(rc, "%s", msg);
	}
	close(l.fd);
	return rc;
}
