/* tfs_load: a raw, .npy or .safetensors file into tensors (tensorfs.h). The whole file is
 * checked before anything is made; then the tensors are made by the pipeline's preparing
 * threads while its copy threads fill those already made (load_pipe.c). */
#include <dirent.h>
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
#include "load_mk.h"
#include "load_pipe.h"
#include "model_dir.h"
#include "typed.h"

#define META_XATTR "user.safetensors.metadata"

struct load {
	const struct tfs_load_opts *o;
	const char *file, *dest;
	int fd;
	uint64_t size;
	int is_dir;                    /* safetensors: dest is a directory */
	int made_dir;                  /* dest was created as a directory */
	int merge;                     /* dest is an existing directory loaded into */
	char **subdirs;                /* directories made under an existing dest */
	size_t nsubdirs;
	size_t nsrc;                   /* a model directory: its files, open */
	struct tfs_pipe_src *src;
	char *metadata;                /* safetensors "__metadata__", or NULL */
	size_t n;
	struct tfs_load_spec *spec;
	struct tfs_pipe_item *items;
	int *made;                     /* made[i]: spec[i].path was created */
	struct tfs_load_mk mk;         /* the tensors made by batches */
	int mk_set;                    /* mk set up */
	int untyped;                   /* the daemon refused "DTYPE SHAPE" in user.tensor.shape
					* (older than the form): dtype and shape set apart */
};

void tfs_load_opts_init(struct tfs_load_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->format = TFS_FORMAT_AUTO;
	o->dtype = TFS_U8;
	o->ndim = -1;
	o->device = -1;
	o->via_file = 1;
	o->direct = 0;
}

static int read_fd(int fd, const char *file, void *buf, size_t n, uint64_t off)
{
	int rc = tfs_pread_full(fd, buf, n, off);

	if (rc == -ENODATA)
		return tfs_seterr(-EBADMSG, "%s: truncated: %s", file, tfs_strerror(EBADMSG));
	if (rc)
		return tfs_seterr(rc, "%s: read: %s", file, tfs_strerror(-rc));
	return 0;
}

static int read_at(struct load *l, void *buf, size_t n, uint64_t off)
{
	return read_fd(l->fd, l->file, buf, n, off);
}

static int add(struct load *l, const char *name, tfs_dtype dt, const struct tfs_shape *sh,
	       uint64_t foff, uint64_t bytes)
{
	struct tfs_load_spec *s = &l->spec[l->n];
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

/* Room for n more tensors. */
static int alloc_specs(struct load *l, size_t n)
{
	size_t cap = l->n + (n ? n : 1);
	struct tfs_load_spec *sp = realloc(l->spec, cap * sizeof(*sp));
	struct tfs_pipe_item *it;
	int *made;

	if (sp)
		l->spec = sp;
	it = sp ? realloc(l->items, cap * sizeof(*it)) : NULL;
	if (it)
		l->items = it;
	made = it ? realloc(l->made, cap * sizeof(*made)) : NULL;
	if (!made)
		return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
	l->made = made;
	memset(l->spec + l->n, 0, (cap - l->n) * sizeof(*sp));
	memset(l->items + l->n, 0, (cap - l->n) * sizeof(*it));
	memset(l->made + l->n, 0, (cap - l->n) * sizeof(*made));
	return 0;
}

/* The tensors of the safetensors file fd (size bytes; src NULL: the load's own file). */
static int plan_st_fd(struct load *l, int fd, const char *file, uint64_t size,
		      const struct tfs_pipe_src *src)
{
	struct st_header h = { 0 };
	uint8_t first[8];
	uint64_t hlen;
	char *json = NULL, why[512];
	int rc;

	if (size < 8 || read_fd(fd, file, first, 8, 0))
		return tfs_seterr(-EBADMSG, "%s: not a safetensors file (shorter than 8 bytes): %s",
				  file, tfs_strerror(EBADMSG));
	if ((rc = tfs_st_header_len(first, size, &hlen))) {
		uint64_t v = 0;

		for (int i = 7; i >= 0; i--)
			v = v << 8 | first[i];
		return tfs_seterr(rc, "%s: header length %llu does not fit the file (%llu bytes): %s",
				  file, (unsigned long long)v, (unsigned long long)size,
				  tfs_strerror(rc));
	}
	if (!(json = malloc(hlen ? hlen : 1)))
		return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
	if ((rc = read_fd(fd, file, json, hlen, 8)))
		goto out;
	if ((rc = tfs_st_parse(json, hlen, size - 8 - hlen, &h, why, sizeof(why)))) {
		rc = tfs_seterr(rc, "%s: bad safetensors header: %s: %s", file, why,
				tfs_strerror(rc));
		goto out;
	}
	if ((rc = alloc_specs(l, h.n)))
		goto out;
	for (size_t i = 0; i < h.n; i++) {
		const struct st_entry *e = &h.e[i];

		if (tfs_name_check(e->name)) {
			rc = tfs_seterr(-EINVAL, "%s: tensor name '%s' cannot be a file name: %s",
					file, e->name, tfs_strerror(EINVAL));
			goto out;
		}
		if ((rc = add(l, e->name, e->dtype, &e->shape, 8 + hlen + e->begin,
			      e->end - e->begin)))
			goto out;
		l->items[l->n - 1].src = src;
	}
	l->is_dir = 1;
	if (!l->metadata) {
		l->metadata = h.metadata;
		h.metadata = NULL;
	}
out:
	tfs_st_free(&h);
	free(json);
	return rc;
}

static int plan_st(struct load *l)
{
	return plan_st_fd(l, l->fd, l->file, l->size, NULL);
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

/* ---- a Hugging Face model directory ---- */

struct keyref {
	const char *name;              /* the key: the spec's path past "dest/" */
	size_t src;                    /* its file in l->src */
};

static int by_keyname(const void *a, const void *b)
{
	return strcmp(((const struct keyref *)a)->name, ((const struct keyref *)b)->name);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Opens the regular file name of the directory as l->src[l->nsrc]. */
static int open_src(struct load *l, const char *name, uint64_t *size)
{
	struct tfs_pipe_src *s = &l->src[l->nsrc];
	char *path;
	struct stat st;
	int fd;

	if (asprintf(&path, "%s/%s", l->file, name) < 0)
		return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		tfs_seterr(-e, "%s: %s", path, tfs_strerror(e));
		free(path);
		return -e;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		tfs_seterr(-EINVAL, "%s: not a regular file: %s", path, tfs_strerror(EINVAL));
		close(fd);
		free(path);
		return -EINVAL;
	}
	*s = (struct tfs_pipe_src){ .fd = fd, .name = path, .dev = (uint64_t)st.st_dev,
				    .ino = (uint64_t)st.st_ino };
	*size = (uint64_t)st.st_size;
	l->nsrc++;
	return 0;
}

static int is_regular(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return 0;
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static const char *base_of(const struct tfs_pipe_src *s)
{
	const char *b = strrchr(s->name, '/');

	return b ? b + 1 : s->name;
}

/* Every key once, no key that is also another's directory, every key where the index
 * says: checked before anything is made. small[j]: l->src[j] is a small file. */
static int check_keys(struct load *l, const struct tfs_model_index *idx, const char *small)
{
	size_t skip = strlen(l->dest) + 1;
	struct keyref *refs = calloc(l->n ? l->n : 1, sizeof(*refs));
	char pre[PATH_MAX];
	int rc = 0;

	if (!refs)
		return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
	for (size_t i = 0; i < l->n; i++)
		refs[i] = (struct keyref){ l->spec[i].path + skip, (size_t)(l->items[i].src - l->src) };
	qsort(refs, l->n, sizeof(*refs), by_keyname);
	for (size_t i = 1; i < l->n && !rc; i++) {
		const struct keyref *a = &refs[i - 1], *b = &refs[i];

		if (strcmp(a->name, b->name))
			continue;
		if (small[a->src] || small[b->src])
			rc = tfs_seterr(-EEXIST, "%s: key '%s' of %s collides with the file %s: %s",
					l->file, a->name, small[a->src] ? base_of(&l->src[b->src]) :
					base_of(&l->src[a->src]), a->name, tfs_strerror(EEXIST));
		else
			rc = tfs_seterr(-EEXIST, "%s: key '%s' is in both %s and %s: %s", l->file,
					a->name, base_of(&l->src[a->src]), base_of(&l->src[b->src]),
					tfs_strerror(EEXIST));
	}
	for (size_t i = 0; i < l->n && !rc; i++) {
		const char *name = refs[i].name;

		for (const char *s = strchr(name, '/'); s && !rc; s = strchr(s + 1, '/')) {
			struct keyref key = { pre, 0 };

			if ((size_t)(s - name) >= sizeof(pre))
				break;
			memcpy(pre, name, (size_t)(s - name));
			pre[s - name] = 0;
			if (bsearch(&key, refs, l->n, sizeof(*refs), by_keyname))
				rc = tfs_seterr(-EINVAL, "%s: '%s' is a key and the directory of the key "
						"'%s': %s", l->file, pre, name, tfs_strerror(EINVAL));
		}
	}
	for (size_t i = 0; idx && i < idx->n && !rc; i++) {
		struct keyref key = { idx->key[i], 0 }, *f;

		f = bsearch(&key, refs, l->n, sizeof(*refs), by_keyname);
		if (!f || small[f->src] || strcmp(base_of(&l->src[f->src]), idx->shard[i]))
			rc = tfs_seterr(-EBADMSG, "%s: the index puts '%s' in %s, which does not "
					"hold it: %s", l->file, idx->key[i], idx->shard[i],
					tfs_strerror(EBADMSG));
	}
	free(refs);
	return rc;
}

/* The shards (those the index names, else every *.safetensors) and the small files of the
 * directory l->file. */
static int plan_dir(struct load *l)
{
	struct tfs_model_index idx = { 0 };
	struct dirent **ents = NULL;
	char **shards = NULL, *small = NULL, *json = NULL, why[512];
	size_t nshards = 0;
	int n, rc = 0, has_index = 0;

	n = scandir(l->file, &ents, NULL, alphasort);
	if (n < 0)
		return tfs_seterr(-errno, "%s: %s", l->file, tfs_strerror(errno));
	l->src = calloc((size_t)n + 1, sizeof(*l->src));
	small = calloc((size_t)n + 1, 1);
	shards = calloc((size_t)n + 1, sizeof(*shards));
	if (!l->src || !small || !shards) {
		rc = tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
		goto out;
	}
	for (int i = 0; i < n; i++)
		if (!strcmp(ents[i]->d_name, TFS_MODEL_INDEX) && is_regular(l->file, TFS_MODEL_INDEX))
			has_index = 1;
	if (has_index) {
		uint64_t size;

		if ((rc = open_src(l, TFS_MODEL_INDEX, &size)))
			goto out;
		l->nsrc--;              /* opened again below with the small files */
		close(l->src[l->nsrc].fd);
		if (size > TFS_MODEL_INDEX_MAX) {
			rc = tfs_seterr(-EFBIG, "%s: %llu bytes, more than an index may have (%u): %s",
					l->src[l->nsrc].name, (unsigned long long)size,
					TFS_MODEL_INDEX_MAX, tfs_strerror(EFBIG));
			goto out;
		}
		if (!(json = malloc(size + 1))) {
			rc = tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
			goto out;
		}
		{
			int fd = open(l->src[l->nsrc].name, O_RDONLY | O_CLOEXEC);

			rc = fd < 0 ? tfs_seterr(-errno, "%s: %s", l->src[l->nsrc].name,
						 tfs_strerror(errno))
				    : read_fd(fd, l->src[l->nsrc].name, json, size, 0);
			if (fd >= 0)
				close(fd);
		}
		if (!rc && (rc = tfs_model_index_parse(json, size, &idx, why, sizeof(why))))
			rc = tfs_seterr(rc, "%s: bad index: %s: %s", l->src[l->nsrc].name, why,
					tfs_strerror(-rc));
		free((char *)l->src[l->nsrc].name);
		l->src[l->nsrc].name = NULL;
		if (rc)
			goto out;
		for (size_t j = 0; j < idx.nshards; j++) {
			if (!is_regular(l->file, idx.shards[j])) {
				rc = tfs_seterr(-ENOENT, "%s: the index names the shard %s, which is "
						"not a file here: %s", l->file, idx.shards[j],
						tfs_strerror(ENOENT));
				goto out;
			}
			shards[nshards++] = idx.shards[j];
		}
		qsort(shards, nshards, sizeof(*shards), cmp_name);
	} else {
		for (int i = 0; i < n; i++) {
			const char *d = ents[i]->d_name;
			size_t k = strlen(d);

			if (tfs_model_plain_name(d) && k > 12 && !strcmp(d + k - 12, ".safetensors") &&
			    is_regular(l->file, d))
				shards[nshards++] = ents[i]->d_name;
		}
	}
	if (!nshards) {
		rc = tfs_seterr(-EINVAL, "%s: a model directory holds %s or *.safetensors files; "
				"this one has none: %s", l->file, TFS_MODEL_INDEX, tfs_strerror(EINVAL));
		goto out;
	}
	for (size_t j = 0; j < nshards; j++) {
		struct tfs_pipe_src *s = &l->src[l->nsrc];
		uint64_t size;

		if ((rc = open_src(l, shards[j], &size)) ||
		    (rc = plan_st_fd(l, s->fd, s->name, size, s)))
			goto out;
	}
	for (int i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;
		struct tfs_pipe_src *s = &l->src[l->nsrc];
		struct tfs_shape sh;
		uint64_t size;

		if (!tfs_model_small_name(d) || !is_regular(l->file, d))
			continue;
		if ((rc = open_src(l, d, &size)) || (rc = alloc_specs(l, 1)))
			goto out;
		small[l->nsrc - 1] = 1;
		tfs_shape_1d(&sh, size);
		if ((rc = add(l, d, TFS_U8, &sh, 0, size)))
			goto out;
		l->items[l->n - 1].src = s;
	}
	rc = check_keys(l, has_index ? &idx : NULL, small);
out:
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	free(shards);
	free(small);
	free(json);
	tfs_model_index_free(&idx);
	return rc;
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

/* Directories: dest itself (unless merging into it), its metadata, and those names with
 * '/' need. */
static int make_dirs(struct load *l)
{
	size_t skip = strlen(l->dest) + 1;

	if (!l->merge) {
		if (mkdir(l->dest, 0755))
			return tfs_seterr(-errno, "%s: %s", l->dest, tfs_strerror(errno));
		l->made_dir = 1;
	}
	if (l->metadata && (!l->merge || (getxattr(l->dest, META_XATTR, NULL, 0) < 0 &&
					  errno == ENODATA)) &&
	    setxattr(l->dest, META_XATTR, l->metadata, strlen(l->metadata), 0))
		return tfs_seterr(-errno, "%s: keep __metadata__ as %s: %s", l->dest, META_XATTR,
				  tfs_strerror(errno));
	for (size_t i = 0; i < l->n; i++) {
		char *path = l->spec[i].path;

		for (char *s = path + skip; (s = strchr(s, '/')); s++) {
			int made;

			*s = 0;
			made = !mkdir(path, 0755);
			if (!made && errno != EEXIST) {
				int e = errno;

				*s = '/';
				return tfs_seterr(-e, "%s: %s", path, tfs_strerror(e));
			}
			if (made && l->merge) {
				char **nd = realloc(l->subdirs, (l->nsubdirs + 1) * sizeof(*nd));

				if (nd)
					l->subdirs = nd;
				if (!nd || !(nd[l->nsubdirs] = strdup(path))) {
					rmdir(path);
					*s = '/';
					return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
				}
				l->nsubdirs++;
			}
			*s = '/';
		}
	}
	return 0;
}

/* Merging: none of the names may exist yet (a merge adds, it never replaces). */
static int check_absent(struct load *l)
{
	struct stat st;

	for (size_t i = 0; i < l->n; i++)
		if (!lstat(l->spec[i].path, &st))
			return tfs_seterr(-EEXIST, "%s: exists; a merge only adds new names: %s",
					  l->spec[i].path, tfs_strerror(EEXIST));
	return 0;
}

/* The pipeline's prepare(): creates, shapes and opens tensor i. */
static int make_one(void *arg, size_t i)
{
	struct load *l = arg;
	struct tfs_load_spec *s = &l->spec[i];
	struct tfs_pipe_item *it = &l->items[i];
	char what[1200], dev[16];
	tfs_tensor *t;
	int fd, rc;

	if ((rc = tfs_load_mk_item(&l->mk, i)) < 0)
		return rc;
	if (rc == 1) {
		/* Made by a batch, typed and on its device: opened by name. Another user
		 * who may write the directory could have put something else under it since:
		 * no symbolic link is followed, and it must be a tensor of ours. */
		struct stat st;

		fd = open(s->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return tfs_seterr(-errno, "%s: %s", s->path, tfs_strerror(errno));
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
			close(fd);
			return tfs_seterr(-ESTALE, "%s: replaced since it was made: %s", s->path,
					  tfs_strerror(ESTALE));
		}
		goto typed;
	}
	fd = open(s->path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0644);
	if (fd < 0)
		return tfs_seterr(-errno, "%s: %s", s->path, tfs_strerror(errno));
	l->made[i] = 1;
	if (l->o->device >= 0 || l->o->device == TFS_DEVICE_CPU) {
		if (l->o->device == TFS_DEVICE_CPU)
			snprintf(dev, sizeof(dev), "cpu");
		else
			snprintf(dev, sizeof(dev), "%d", l->o->device);
		if (fsetxattr(fd, "user.tensor.device", dev, strlen(dev), 0)) {
			rc = tfs_seterr(-errno, "%s: device %d: %s", s->path, l->o->device,
					tfs_strerror(errno));
			goto fail;
		}
	}
	/* Typed and sized in one request where the daemon takes it (core/typed.h). */
	if ((rc = tfs_set_type(fd, NULL, s->dtype, &s->shape, &l->untyped, what, sizeof(what)))) {
		rc = tfs_seterr(rc, "%s: %s: %s", s->path, what, tfs_strerror(-rc));
		goto fail;
	}
typed:
	/* Another node's tensor whose memory does not map here (a dest made on another
	 * mount's node) goes through the file. */
	if (it->bytes && !l->o->via_file && !tfs_open_fd(fd, &t) &&
	    (!t->via_fd || (tfs_close(t), 0))) {
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
	/* Not mappable here (no libcudart, another node's memory): through the file. Its
	 * size is checked before the first write() into it (load_copy.c, sized()): fills
	 * need no such round trip, the daemon checking their range itself. */
	it->unsized = it->bytes > 0;
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

void tfs_rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void release(struct load *l, int failed)
{
	int made_dir = l->made_dir;

	if (l->mk_set)
		tfs_load_mk_fini(&l->mk);

	for (size_t i = 0; i < l->n; i++) {
		tfs_close(l->items[i].t);
		if (l->items[i].fd >= 0)
			close(l->items[i].fd);
		if (failed && !made_dir && l->made[i])
			unlink(l->spec[i].path);
		free(l->spec[i].path);
	}
	if (failed && made_dir)
		tfs_rm_tree(l->dest);
	for (size_t i = l->nsubdirs; i-- > 0;) {
		if (failed)
			rmdir(l->subdirs[i]);
		free(l->subdirs[i]);
	}
	free(l->subdirs);
	for (size_t i = 0; i < l->nsrc; i++) {
		close(l->src[i].fd);
		free((char *)l->src[i].name);
	}
	free(l->src);
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
	if (!lstat(dest, &st)) {
		if (!opts->merge || !S_ISDIR(st.st_mode))
			return tfs_seterr(-EEXIST, "%s: %s", dest, tfs_strerror(EEXIST));
		l.merge = 1;
	}
	if (stat(file, &st) == 0 && S_ISDIR(st.st_mode)) {
		/* a model directory: its files are opened by plan_dir */
		if (opts->format != TFS_FORMAT_AUTO && opts->format != TFS_FORMAT_SAFETENSORS)
			return tfs_seterr(-EISDIR, "%s: a directory loads only as a model "
					  "directory of safetensors shards: %s", file,
					  tfs_strerror(EISDIR));
		if ((rc = plan_dir(&l)))
			goto out;
	} else {
		l.fd = open(file, O_RDONLY | O_CLOEXEC);
		if (l.fd < 0)
			return tfs_seterr(-errno, "%s: %s", file, tfs_strerror(errno));
		if (fstat(l.fd, &st) || !S_ISREG(st.st_mode)) {
			rc = tfs_seterr(-EINVAL, "%s: not a regular file: %s", file,
					tfs_strerror(EINVAL));
			goto out;
		}
		l.size = (uint64_t)st.st_size;
		if ((rc = plan(&l)))
			goto out;
	}
	if (l.merge && !l.is_dir) {
		rc = tfs_seterr(-EEXIST, "%s: exists; only a directory of tensors merges into "
				"it: %s", dest, tfs_strerror(EEXIST));
		goto out;
	}
	if ((l.merge && (rc = check_absent(&l))) || (rc = check_space(&l)))
		goto out;
	if (l.is_dir && (rc = make_dirs(&l)))
		goto out;
	tfs_load_mk_init(&l.mk, l.spec, l.made, l.n, opts->device);
	l.mk_set = 1;
	p = (struct tfs_pipe){ .fd = l.fd, .fname = file, .to_tensor = 1, .n = l.n,
			       .items = l.items, .prepare = make_one, .finish = done_one, .arg = &l,
			       .threads = opts->threads, .progress = opts->progress,
			       .progress_arg = opts->progress_arg, .cancel = opts->cancel,
			       .via_file = opts->via_file, .direct = opts->direct };
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
	if (l.fd >= 0)
		close(l.fd);
	return rc;
}
