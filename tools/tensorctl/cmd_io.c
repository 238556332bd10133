/* tensorctl load and save: raw bytes, .npy and .safetensors, through the tensor files in
 * 1 MiB blocks (the mount's max_read/max_write). A failed load removes what it made; a
 * failed save leaves no output file (it writes a temporary file and renames it). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ctl.h"
#include "tensorfs.h"
#include "dtype.h"
#include "formats.h"

#define BLOCK (1u << 20)
#define DIRECT_BLOCK (8u << 20)
#define META_XATTR "user.safetensors.metadata"

enum fmt { F_AUTO, F_RAW, F_NPY, F_ST };

static int parse_fmt(const char *s, enum fmt *f)
{
	if (!strcmp(s, "raw"))
		*f = F_RAW;
	else if (!strcmp(s, "npy"))
		*f = F_NPY;
	else if (!strcmp(s, "safetensors") || !strcmp(s, "st"))
		*f = F_ST;
	else
		return usage_error("--format '%s': expected raw, npy or safetensors", s);
	return 0;
}

static enum fmt fmt_from_ext(const char *path)
{
	size_t n = strlen(path);

	if (n > 4 && !strcmp(path + n - 4, ".npy"))
		return F_NPY;
	if (n > 12 && !strcmp(path + n - 12, ".safetensors"))
		return F_ST;
	return F_RAW;
}

static int read_full(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR && !ctl_interrupted)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ENODATA;
		got += (size_t)r;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t w = pwrite(fd, (const char *)buf + done, n - done, (off_t)(off + done));

		if (w < 0 && errno == EINTR && !ctl_interrupted)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		done += (size_t)w;
	}
	return 0;
}

/* Copies n bytes from in@ioff to out@ooff in 1 MiB blocks. what names the failing side. */
static int copy_fd(int in, uint64_t ioff, int out, uint64_t ooff, uint64_t n, char *buf,
		   struct progress *p, const char *src, const char *dst)
{
	int rc;

	while (n) {
		size_t len = n < BLOCK ? (size_t)n : BLOCK;

		if (ctl_interrupted)
			return err(-EINTR, "interrupted: %s", strerror(EINTR));
		if ((rc = read_full(in, buf, len, ioff)))
			return err(rc, "%s: read: %s", src,
				   rc == -ENODATA ? "file shorter than expected" : strerror(-rc));
		if ((rc = write_full(out, buf, len, ooff)))
			return err(rc, "%s: write: %s", dst, strerror(-rc));
		progress_add(p, len);
		ioff += len;
		ooff += len;
		n -= len;
	}
	return 0;
}

/* A second thread for the host backend's direct copies: file <-> mapping is a plain
 * kernel copy, so two threads keep two cores busy (as FUSE's daemon thread does). */
struct half { int fd, to_tensor; char *mem; uint64_t foff, n; int rc; };

static void *half_copy(void *arg)
{
	struct half *h = arg;

	for (uint64_t done = 0; done < h->n && !h->rc && !ctl_interrupted;) {
		size_t len = h->n - done < DIRECT_BLOCK ? (size_t)(h->n - done) : DIRECT_BLOCK;

		h->rc = h->to_tensor ? read_full(h->fd, h->mem + done, len, h->foff + done)
				     : write_full(h->fd, h->mem + done, len, h->foff + done);
		done += len;
	}
	if (!h->rc && ctl_interrupted)
		h->rc = -EINTR;
	return NULL;
}

/* The library's direct path: tfs_open maps the tensor, and bytes move between the file
 * and that memory without FUSE (host backend: read(2)/write(2) straight into/out of the
 * mapping; cuda: through buf and tfs_write/tfs_read). Returns 1 when the tensor cannot be
 * mapped here, or the FUSE file is the faster way (the caller then uses it), else 0 or a
 * negative errno. to_tensor: fd@foff -> tensor, else tensor -> fd.
 * TENSORCTL_COPY=fuse|direct forces a path; auto (the default) takes the direct path
 * except for loads on the host backend, where the FUSE file measured faster (the daemon's
 * pages are already mapped; this process would first fault 1 GiB of them in:
 * tests/bench/RESULTS-tensorctl.md). */
static int direct_copy(const char *tpath, int to_tensor, int fd, uint64_t foff, uint64_t n,
		       char *buf, struct progress *p, const char *fname)
{
	struct tfs_tensor_info info;
	tfs_tensor *t = NULL;
	const char *env = getenv("TENSORCTL_COPY");
	int force = env && !strcmp(env, "direct");
	uint64_t done = 0;
	int rc = 0;

	if ((env && !strcmp(env, "fuse")) || n == 0)
		return 1;
	if (tfs_open(tpath, to_tensor ? O_RDWR : O_RDONLY, &t))
		return 1;
	if (tfs_tensor_get_info(t, &info) || info.bytes != n || !info.data ||
	    (!force && to_tensor && info.on_host)) {
		tfs_close(t);
		return 1;
	}
#ifdef MADV_POPULATE_WRITE
	/* Fault the fresh mapping in with one call instead of one fault per 4 KiB page. */
	if (info.on_host) {
		uintptr_t a = (uintptr_t)info.data & ~(uintptr_t)4095;

		madvise((void *)a, (size_t)((uintptr_t)info.data + n - a),
			to_tensor ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
	}
#endif
	if (info.on_host && n >= (64u << 20)) {
		/* the helper takes the second half; progress counts it with the first */
		uint64_t first = n / 2 / 4096 * 4096;
		struct half h = { fd, to_tensor, (char *)info.data + first, foff + first, n - first, 0 };
		pthread_t th;

		if (!pthread_create(&th, NULL, half_copy, &h)) {
			for (; done < first && !rc;) {
				size_t len = first - done < DIRECT_BLOCK ? (size_t)(first - done)
									 : DIRECT_BLOCK;
				char *mem = (char *)info.data + done;

				if (ctl_interrupted)
					rc = -EINTR;
				else if (to_tensor)
					rc = read_full(fd, mem, len, foff + done);
				else
					rc = write_full(fd, mem, len, foff + done);
				done += len;
				progress_add(p, 2 * (uint64_t)len);
			}
			pthread_join(th, NULL);
			if (!rc)
				rc = h.rc;
			if (rc == -EINTR)
				rc = err(rc, "interrupted: %s", strerror(EINTR));
			else if (rc)
				rc = err(rc, "%s: %s: %s", fname, to_tensor ? "read" : "write",
					 rc == -ENODATA ? "file shorter than expected" : strerror(-rc));
			else
				progress_add(p, n - 2 * first);
			tfs_close(t);
			return rc;
		}
	}
	while (done < n) {
		size_t len = n - done < DIRECT_BLOCK ? (size_t)(n - done) : DIRECT_BLOCK;
		char *mem = (char *)info.data + done;

		if (ctl_interrupted) {
			rc = err(-EINTR, "interrupted: %s", strerror(EINTR));
			break;
		}
		if (!info.on_host && len > BLOCK)
			len = BLOCK;
		if (to_tensor) {
			rc = read_full(fd, info.on_host ? mem : buf, len, foff + done);
			if (rc) {
				rc = err(rc, "%s: read: %s", fname, rc == -ENODATA ?
					 "file shorter than expected" : strerror(-rc));
				break;
			}
			if (!info.on_host && (rc = tfs_write(t, done, buf, len))) {
				rc = err(rc, "%s: %s: %s", tpath, tfs_errmsg(), strerror(-rc));
				break;
			}
		} else {
			if (!info.on_host && (rc = tfs_read(t, done, buf, len))) {
				rc = err(rc, "%s: %s: %s", tpath, tfs_errmsg(), strerror(-rc));
				break;
			}
			if ((rc = write_full(fd, info.on_host ? mem : buf, len, foff + done))) {
				rc = err(rc, "%s: write: %s", fname, strerror(-rc));
				break;
			}
		}
		progress_add(p, len);
		done += len;
	}
	tfs_close(t);
	return rc;
}

/* Creates the tensor and fills it with n bytes of fd from off. Removes it on failure. */
static int load_tensor(const char *dst, tfs_dtype dt, const struct tfs_shape *sh, int device,
		       int fd, uint64_t off, uint64_t n, const char *src, char *buf,
		       struct progress *p)
{
	int out, rc;

	if ((rc = make_tensor(dst, dt, sh, device)))
		return rc;
	rc = direct_copy(dst, 1, fd, off, n, buf, p, src);
	if (rc <= 0) {
		if (rc)
			goto fail;
		return 0;
	}
	out = open(dst, O_WRONLY);
	if (out < 0) {
		rc = err(-errno, "%s: %s", dst, strerror(errno));
		goto fail;
	}
	rc = copy_fd(fd, off, out, 0, n, buf, p, src, dst);
	if (close(out) && !rc)
		rc = err(-errno, "%s: close: %s", dst, strerror(errno));
	if (!rc)
		return 0;
fail:
	unlink(dst);
	return rc;
}

static int check_space(const char *dst, uint64_t need)
{
	struct statvfs sv;
	char a[32], b[32];
	uint64_t freeb;

	if (statvfs(dst, &sv))
		return 0;
	freeb = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (need <= freeb)
		return 0;
	human_bytes(need, a, sizeof(a));
	human_bytes(freeb, b, sizeof(b));
	return err(-ENOSPC, "%s: needs %s, the device has %s free: %s", dst, a, b,
		   strerror(ENOSPC));
}

static int parent_of(const char *path, char *out, size_t size)
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
	return 0;
}

static int load_st(const char *file, int fd, uint64_t size, const char *dst, int device,
		   int quiet, char *buf)
{
	struct st_header h = { 0 };
	uint8_t first[8];
	uint64_t hlen, total = 0;
	char *json = NULL, why[512], path[PATH_MAX * 2], parent[PATH_MAX];
	struct progress *p = NULL;
	int rc, made = 0;

	if (size < 8 || (rc = read_full(fd, first, 8, 0)))
		return err(-EBADMSG, "%s: not a safetensors file (shorter than 8 bytes): %s", file,
			   strerror(EBADMSG));
	if ((rc = st_header_len(first, size, &hlen))) {
		uint64_t n = 0;

		for (int i = 7; i >= 0; i--)
			n = n << 8 | first[i];
		return err(rc, "%s: header length %llu does not fit the file (%llu bytes): %s",
			   file, (unsigned long long)n, (unsigned long long)size, strerror(-rc));
	}
	json = malloc(hlen);
	if (!json)
		return err(-ENOMEM, "%s", strerror(ENOMEM));
	if ((rc = read_full(fd, json, hlen, 8))) {
		rc = err(rc, "%s: read: %s", file, strerror(-rc));
		goto out;
	}
	if ((rc = st_parse(json, hlen, size - 8 - hlen, &h, why, sizeof(why)))) {
		rc = err(rc, "%s: bad safetensors header: %s: %s", file, why, strerror(-rc));
		goto out;
	}
	for (size_t i = 0; i < h.n; i++) {
		if (tfs_name_check(h.e[i].name)) {
			rc = err(-EINVAL, "%s: tensor name '%s' cannot be a file name: %s", file,
				 h.e[i].name, strerror(EINVAL));
			goto out;
		}
		total += h.e[i].end - h.e[i].begin;
	}
	parent_of(dst, parent, sizeof(parent));
	if ((rc = check_space(parent, total)))
		goto out;
	if (mkdir(dst, 0755)) {
		rc = err(-errno, "%s: %s", dst, strerror(errno));
		goto out;
	}
	made = 1;
	if (h.metadata && setxattr(dst, META_XATTR, h.metadata, strlen(h.metadata), 0)) {
		rc = err(-errno, "%s: keep __metadata__ as %s: %s", dst, META_XATTR,
			 strerror(errno));
		goto out;
	}
	p = progress_start(dst, total, quiet);
	for (size_t i = 0; i < h.n; i++) {
		struct st_entry *e = &h.e[i];

		snprintf(path, sizeof(path), "%s/%s", dst, e->name);
		/* names with '/' make subdirectories */
		for (char *s = path + strlen(dst) + 1; (s = strchr(s, '/')); s++) {
			*s = 0;
			if (mkdir(path, 0755) && errno != EEXIST) {
				rc = err(-errno, "%s: %s", path, strerror(errno));
				goto out;
			}
			*s = '/';
		}
		rc = load_tensor(path, e->dtype, &e->shape, device, fd, 8 + hlen + e->begin,
				 e->end - e->begin, file, buf, p);
		if (rc)
			goto out;
	}
out:
	progress_end(p);
	if (rc && made)
		remove_tree(dst);
	st_free(&h);
	free(json);
	return rc;
}

int cmd_load(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "format", required_argument, NULL, 'F' }, { "dtype", required_argument, NULL, 't' },
		{ "shape", required_argument, NULL, 's' }, { "device", required_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' }, { NULL, 0, NULL, 0 } };
	const char *dts = NULL, *shs = NULL, *file;
	char dst[PATH_MAX], parent[PATH_MAX], why[256], *buf = NULL;
	enum fmt f = F_AUTO;
	struct progress *p = NULL;
	struct tfs_shape sh;
	struct stat st;
	tfs_dtype dt = TFS_U8;
	uint8_t head[16] = { 0 };
	int c, fd = -1, device = -1, quiet = 0, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "F:t:s:d:q", lo, NULL)) != -1) {
		switch (c) {
		case 'F': if ((rc = parse_fmt(optarg, &f))) return rc; break;
		case 't': dts = optarg; break;
		case 's': shs = optarg; break;
		case 'q': quiet = 1; break;
		case 'd': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || end == optarg || v < 0 || v > 1 << 20)
				return usage_error("--device '%s': not a GPU ordinal", optarg);
			device = (int)v;
			break;
		}
		default: return usage_error("bad option");
		}
	}
	if (optind != argc - 2)
		return usage_error("expected FILE and DEST");
	file = argv[optind];
	ctl_path(argv[optind + 1], dst, sizeof(dst));
	if (dts && tfs_dtype_parse(dts, strlen(dts), &dt))
		return usage_error("unknown dtype '%s'", dts);
	if (shs && tfs_shape_parse(shs, strlen(shs), &sh))
		return usage_error("bad shape '%s'", shs);
	if ((rc = on_tensorfs(dst, NULL, 0)))
		return rc;
	if (!lstat(dst, &st))
		return err(-EEXIST, "%s: %s", dst, strerror(EEXIST));
	fd = open(file, O_RDONLY);
	if (fd < 0)
		return err(-errno, "%s: %s", file, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		rc = err(-EINVAL, "%s: not a regular file: %s", file, strerror(EINVAL));
		goto out;
	}
	if (pread(fd, head, sizeof(head), 0) < 0) {
		rc = err(-errno, "%s: read: %s", file, strerror(errno));
		goto out;
	}
	if (f == F_AUTO) {
		uint64_t hs;

		if (!memcmp(head, "\x93NUMPY", 6))
			f = F_NPY;
		else if (st.st_size > 9 && !st_header_len(head, (uint64_t)st.st_size, &hs) &&
			 head[8] == '{')
			f = F_ST;
		else
			f = fmt_from_ext(file);
	}
	if ((f == F_NPY || f == F_ST) && (dts || shs)) {
		rc = usage_error("--dtype and --shape are for raw files only");
		goto out;
	}
	if (posix_memalign((void **)&buf, 4096, BLOCK)) {
		rc = err(-ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	if (f == F_ST) {
		rc = load_st(file, fd, (uint64_t)st.st_size, dst, device, quiet, buf);
		goto out;
	}
	parent_of(dst, parent, sizeof(parent));
	if (f == F_NPY) {
		struct npy_info ni;
		uint64_t hs, size = (uint64_t)st.st_size;
		uint8_t *hb;

		if (npy_header_size(head, size < 16 ? (size_t)size : 16, &hs) || hs > size ||
		    hs > (16u << 20)) {
			rc = err(-EBADMSG, "%s: not an .npy file, or its header is truncated: %s",
				 file, strerror(EBADMSG));
			goto out;
		}
		hb = malloc(hs);
		if (!hb || read_full(fd, hb, hs, 0)) {
			free(hb);
			rc = err(-EIO, "%s: read: %s", file, strerror(EIO));
			goto out;
		}
		rc = npy_parse(hb, hs, &ni, why, sizeof(why));
		free(hb);
		if (rc) {
			rc = err(rc, "%s: bad .npy header: %s: %s", file, why, strerror(-rc));
			goto out;
		}
		if (size - ni.data_off != ni.bytes) {
			rc = err(-EBADMSG, "%s: %s: header says %llu bytes of data, file has %llu: %s",
				 file, size - ni.data_off < ni.bytes ? "truncated" : "oversized",
				 (unsigned long long)ni.bytes,
				 (unsigned long long)(size - ni.data_off), strerror(EBADMSG));
			goto out;
		}
		if ((rc = check_space(parent, ni.bytes)))
			goto out;
		p = progress_start(dst, ni.bytes, quiet);
		rc = load_tensor(dst, ni.dtype, &ni.shape, device, fd, ni.data_off, ni.bytes, file,
				 buf, p);
		goto out;
	}
	/* raw */
	{
		uint64_t size = (uint64_t)st.st_size, bytes;
		size_t isz = tfs_dtype_size(dt);

		if (!shs) {
			if (size % isz) {
				rc = err(-EINVAL, "%s: %llu bytes is not a whole number of %s: %s",
					 file, (unsigned long long)size, tfs_dtype_name(dt),
					 strerror(EINVAL));
				goto out;
			}
			tfs_shape_1d(&sh, size / isz);
		}
		if (tfs_shape_bytes(&sh, isz, &bytes) || bytes != size) {
			rc = err(-EINVAL, "%s: file has %llu bytes, %s %s needs %llu: %s", file,
				 (unsigned long long)size, tfs_dtype_name(dt), shs,
				 (unsigned long long)bytes, strerror(EINVAL));
			goto out;
		}
		if ((rc = check_space(parent, bytes)))
			goto out;
		p = progress_start(dst, bytes, quiet);
		rc = load_tensor(dst, dt, &sh, device, fd, 0, bytes, file, buf, p);
	}
out:
	progress_end(p);
	free(buf);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* ---- save ---- */

struct walk { struct st_header h; size_t cap; };

static int collect(const char *root, const char *rel, struct walk *w, int depth)
{
	char path[PATH_MAX * 2], sub[PATH_MAX];
	struct dirent **ents;
	int n, rc = 0;

	snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
	if (depth > 64)
		return err(-ELOOP, "%s: too deep: %s", path, strerror(ELOOP));
	n = scandir(path, &ents, NULL, alphasort);
	if (n < 0)
		return err(-errno, "%s: %s", path, strerror(errno));
	for (int i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;
		char full[PATH_MAX * 2];
		struct stat st;
		struct tfs_meta m;

		if (rc || !strcmp(d, ".") || !strcmp(d, ".."))
			goto next;
		snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", d);
		snprintf(full, sizeof(full), "%s/%s", root, sub);
		if (stat(full, &st)) {
			rc = err(-errno, "%s: %s", full, strerror(errno));
			goto next;
		}
		if (S_ISDIR(st.st_mode)) {
			rc = collect(root, sub, w, depth + 1);
			goto next;
		}
		if ((rc = read_meta(full, &m, NULL)))
			goto next;
		if (w->h.n == w->cap) {
			size_t cap = w->cap ? 2 * w->cap : 16;
			struct st_entry *e = realloc(w->h.e, cap * sizeof(*e));

			if (!e) {
				rc = err(-ENOMEM, "%s", strerror(ENOMEM));
				goto next;
			}
			w->h.e = e;
			w->cap = cap;
		}
		w->h.e[w->h.n] = (struct st_entry){ .name = strdup(sub), .dtype = m.dtype,
						    .shape = m.shape };
		if (!w->h.e[w->h.n].name) {
			rc = err(-ENOMEM, "%s", strerror(ENOMEM));
			goto next;
		}
		w->h.n++;
next:
		free(ents[i]);
	}
	free(ents);
	return rc;
}

static int open_tensor(const char *path, uint64_t *bytes)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return err(-errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		close(fd);
		return err(-errno, "%s: %s", path, strerror(errno));
	}
	*bytes = (uint64_t)st.st_size;
	return fd;
}

static int save_st(const char *dir, int out, const char *file, int quiet, char *buf)
{
	struct walk w = { 0 };
	struct progress *p = NULL;
	char path[PATH_MAX * 2], md[65537];
	uint8_t *hdr = NULL;
	uint64_t total = 0;
	long hlen;
	ssize_t n;
	int rc;

	if ((rc = collect(dir, "", &w, 0)))
		goto out;
	n = getxattr(dir, META_XATTR, md, sizeof(md) - 1);
	if (n > 0) {
		md[n] = 0;
		w.h.metadata = strdup(md);
	}
	st_layout(&w.h);
	hlen = st_format(&w.h, &hdr);
	if (hlen < 0) {
		rc = err((int)hlen, "%s: cannot write the header: %s", dir, strerror((int)-hlen));
		goto out;
	}
	if ((rc = write_full(out, hdr, (size_t)hlen, 0))) {
		rc = err(rc, "%s: write: %s", file, strerror(-rc));
		goto out;
	}
	for (size_t i = 0; i < w.h.n; i++)
		total += w.h.e[i].end - w.h.e[i].begin;
	p = progress_start(file, total, quiet);
	for (size_t i = 0; i < w.h.n; i++) {
		struct st_entry *e = &w.h.e[i];
		uint64_t bytes;
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, e->name);
		if ((fd = open_tensor(path, &bytes)) < 0) {
			rc = fd;
			goto out;
		}
		if (bytes != e->end - e->begin)
			rc = err(-EAGAIN, "%s: changed while saving: %s", path, strerror(EAGAIN));
		else if ((rc = direct_copy(path, 0, out, (uint64_t)hlen + e->begin, bytes, buf,
					   p, file)) == 1)
			rc = copy_fd(fd, 0, out, (uint64_t)hlen + e->begin, bytes, buf, p, path,
				     file);
		close(fd);
		if (rc)
			goto out;
	}
out:
	progress_end(p);
	free(hdr);
	st_free(&w.h);
	return rc;
}

int cmd_save(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "format", required_argument, NULL, 'F' }, { "quiet", no_argument, NULL, 'q' },
		{ "force", no_argument, NULL, 'f' }, { NULL, 0, NULL, 0 } };
	char src[PATH_MAX], tmp[PATH_MAX + 32], *buf = NULL;
	const char *file;
	enum fmt f = F_AUTO;
	struct progress *p = NULL;
	struct stat st;
	int c, out = -1, quiet = 0, force = 0, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "F:qf", lo, NULL)) != -1) {
		switch (c) {
		case 'F': if ((rc = parse_fmt(optarg, &f))) return rc; break;
		case 'q': quiet = 1; break;
		case 'f': force = 1; break;
		default: return usage_error("bad option");
		}
	}
	if (optind != argc - 2)
		return usage_error("expected NAME and FILE");
	ctl_path(argv[optind], src, sizeof(src));
	file = argv[optind + 1];
	if ((rc = on_tensorfs(src, NULL, 0)))
		return rc;
	if (stat(src, &st))
		return err(-errno, "%s: %s", src, strerror(errno));
	if (f == F_AUTO)
		f = S_ISDIR(st.st_mode) ? F_ST : fmt_from_ext(file);
	if (S_ISDIR(st.st_mode) != (f == F_ST))
		return err(-EINVAL, "%s: %s: %s", src, S_ISDIR(st.st_mode) ?
			   "a directory saves only as safetensors" :
			   "a single tensor saves as raw or npy", strerror(EINVAL));
	if (!force && !lstat(file, &st))
		return err(-EEXIST, "%s: %s", file, strerror(EEXIST));
	if (posix_memalign((void **)&buf, 4096, BLOCK))
		return err(-ENOMEM, "%s", strerror(ENOMEM));
	snprintf(tmp, sizeof(tmp), "%s.tensorctl-XXXXXX", file);
	out = mkstemp(tmp);
	if (out < 0) {
		rc = err(-errno, "%s: %s", file, strerror(errno));
		goto out;
	}
	{
		mode_t um = umask(0);

		umask(um);
		fchmod(out, 0666 & ~um);
	}
	if (f == F_ST) {
		rc = save_st(src, out, file, quiet, buf);
	} else {
		struct tfs_meta m;
		uint64_t bytes, off = 0;
		uint8_t hdr[4096];
		int fd;

		if ((rc = read_meta(src, &m, NULL)))
			goto out;
		if (f == F_NPY) {
			long hl = npy_format(m.dtype, &m.shape, hdr, sizeof(hdr));

			if (hl < 0) {
				rc = err((int)hl, "%s: dtype %s has no .npy equivalent: %s", src,
					 tfs_dtype_name(m.dtype), strerror((int)-hl));
				goto out;
			}
			if ((rc = write_full(out, hdr, (size_t)hl, 0))) {
				rc = err(rc, "%s: write: %s", file, strerror(-rc));
				goto out;
			}
			off = (uint64_t)hl;
		}
		if ((fd = open_tensor(src, &bytes)) < 0) {
			rc = fd;
			goto out;
		}
		if (bytes != m.bytes) {
			rc = err(-EAGAIN, "%s: changed while saving: %s", src, strerror(EAGAIN));
		} else {
			p = progress_start(file, bytes, quiet);
			rc = direct_copy(src, 0, out, off, bytes, buf, p, file);
			if (rc == 1)
				rc = copy_fd(fd, 0, out, off, bytes, buf, p, src, file);
		}
		close(fd);
	}
	if (!rc && rename(tmp, file))
		rc = err(-errno, "%s: %s", file, strerror(errno));
out:
	progress_end(p);
	if (out >= 0) {
		close(out);
		if (rc)
			unlink(tmp);
	}
	free(buf);
	return rc;
}
