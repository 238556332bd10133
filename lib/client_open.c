/* Opening a tensor by path (the open descriptor is the reference), from a descriptor or
 * from metadata JSON, and the reference counting that tfs_close and DLPack share. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "client_internal.h"

#define FUSE_SUPER_MAGIC 0x65735546
#define META_XATTR "user.tensor.meta"
/* How many times one tfs_open opens its path at most: again only when the tensor it
 * opened lost its name to a rename or an unlink before the handle socket was asked for
 * its memory, a window of microseconds. */
#define OPEN_TRIES 100

static _Atomic long firsts;        /* opens by open_first's way (for tests) */

int tfs_unmappable_here(int rc)
{
	return rc < 0 && rc != -ENOMEM && rc != -EMFILE && rc != -ENFILE;
}

int tfs_tensor_from_meta(const struct tfs_meta *m, int fd, const char *name, int want_write,
			 tfs_tensor **out)
{
	tfs_tensor *t;
	void *base = NULL;
	int rc, writable = 1;

	t = calloc(1, sizeof(*t));
	if (!t) {
		rc = tfs_seterr(-ENOMEM, "out of memory");
		goto fail_fd;
	}
	t->meta = *m;
	t->fd = fd;
	if (m->bytes > 0) {
		/* Another node's tensor maps when its handle opens here (the same machine:
		 * its host object, the same GPU), as a local one: no daemon between. Else
		 * the descriptor still reaches it (the daemon forwards), so any failure
		 * that says the memory is out of reach sends the bytes that way. */
		rc = tfs_ipc_acquire_fd(m, fd, fd < 0 ? name : NULL, &t->map, &base, &writable);
		if (rc && m->remote && tfs_unmappable_here(rc)) {
			if (fd < 0) {
				char why[256];

				snprintf(why, sizeof(why), "%s", tfs_errmsg());
				rc = tfs_seterr(-EREMOTE, "the tensor's bytes are on node %s and "
						"do not map here (%s): open it by path on a mount to "
						"read or write them", m->node, why);
				goto fail_struct;
			}
			t->map = NULL;
			t->via_fd = 1;
			writable = 1;        /* the descriptor's access mode and the owner decide */
		} else if (rc) {
			goto fail_struct;
		} else {
			t->data = (char *)base + m->ipc_offset;
		}
	}
	t->writable = want_write && writable;
	t->refs = 1;
	*out = t;
	return 0;
fail_struct:
	free(t);
fail_fd:
	if (fd >= 0)
		close(fd);
	return rc;
}

void tfs_tensor_ref(tfs_tensor *t)
{
	__atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
}

int tfs_tensor_unref(tfs_tensor *t)
{
	int rc;

	if (__atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return 0;
	if (t->event) {
		const struct tfs_cudart *cu = tfs_cudart_get(&rc);

		if (cu)
			cu->EventDestroy(t->event);
	}
	rc = tfs_ipc_release(t->map);
	if (t->held_ino)
		tfs_fds_drop(t->held_ino, t->fd);
	if (t->fd >= 0)
		close(t->fd);
	free(t);
	return rc;
}

int tfs_close(tfs_tensor *t)
{
	return t ? tfs_tensor_unref(t) : 0;
}

/* Reads user.tensor.meta of fd in one call (a second only if it outgrew the buffer). */
static int read_meta(int fd, struct tfs_meta *m)
{
	char stackbuf[4096], *buf = stackbuf;
	struct statfs sf;
	ssize_t n;
	int rc, saved;

	n = fgetxattr(fd, META_XATTR, buf, sizeof(stackbuf));
	if (n < 0 && errno == ERANGE) {
		n = fgetxattr(fd, META_XATTR, NULL, 0);
		if (n > 0 && (buf = malloc((size_t)n)) != NULL)
			n = fgetxattr(fd, META_XATTR, buf, (size_t)n);
		else if (n > 0)
			return tfs_seterr(-ENOMEM, "out of memory");
	}
	if (n < 0) {
		saved = errno;
		if (fstatfs(fd, &sf) == 0 && sf.f_type != FUSE_SUPER_MAGIC)
			rc = tfs_seterr(-ENOTSUP, "not a tensor: the file is not on a tensorfs mount");
		else if (saved == ENODATA || saved == ENOTSUP)
			rc = tfs_seterr(-ENODATA, "not a tensor: the file has no %s", META_XATTR);
		else
			rc = tfs_seterr(-saved, "reading %s: %s", META_XATTR, tfs_strerror(saved));
		goto out;
	}
	rc = tfs_meta_from_json(buf, (size_t)n, m);
	if (rc)
		rc = tfs_seterr(-EBADMSG, "malformed %s", META_XATTR);
out:
	if (buf != stackbuf)
		free(buf);
	return rc;
}

/* The tensor m describes, referenced by fd (taken, closed on error too); st as for
 * open_owned_fd. */
static int tensor_on_fd(int fd, const struct stat *st, const struct tfs_meta *m,
			tfs_tensor **out)
{
	int rc, acc = fcntl(fd, F_GETFL) & O_ACCMODE;

	if ((rc = tfs_tensor_from_meta(m, fd, NULL, acc != O_RDONLY, out)))
		return rc;
	if (st) {
		tfs_fds_add(st, fd, acc);
		(*out)->held_ino = st->st_ino;
	}
	return 0;
}

/* st: fd's attributes when it was just opened by path, so that they are current
 * (meta_cache.c): then the metadata may be remembered and fd shared. NULL for a
 * descriptor opened who knows when. */
static int open_owned_fd(int fd, const struct stat *st, tfs_tensor **out)
{
	struct tfs_meta m;
	struct stat dst;
	int rc;

	if (st && S_ISDIR(st->st_mode)) {
		rc = tfs_seterr(-EISDIR, "a directory is not a tensor");
		goto fail;
	}
	if (!(st && tfs_mc_get(st, &m))) {
		if ((rc = read_meta(fd, &m))) {
			/* By descriptor fstat only now, to tell a directory: it costs a FUSE
			 * request (~15 µs). */
			if (!st && (rc == -ENODATA || rc == -ENOTSUP) &&
			    fstat(fd, &dst) == 0 && S_ISDIR(dst.st_mode))
				rc = tfs_seterr(-EISDIR, "a directory is not a tensor");
			goto fail;
		}
		if (st)
			tfs_mc_put(st, &m);
	}
	return tensor_on_fd(fd, st, &m, out);
fail:
	close(fd);
	return rc;
}

/* A tensor this process holds open already, unchanged, opened again without asking the
 * daemon (fd_share.c); -1 when there is none to share. st: stat(path), answered by the
 * kernel from the attributes it keeps, current as for meta_cache.c; so is the access
 * check. */
static int dup_held(const char *path, int acc, const struct stat *st)
{
	static const int mode[] = { [O_RDONLY] = R_OK, [O_WRONLY] = W_OK, [O_RDWR] = R_OK | W_OK };
	int fd;

	if (!tfs_fds_any())
		return -1;
	fd = tfs_fds_dup(st, acc);
	/* Holding a descriptor is no licence to open anew: a chmod since counts. */
	if (fd >= 0 && faccessat(AT_FDCWD, path, mode[acc], AT_EACCESS)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* user.tensor.meta of whatever file path names at the moment (one getxattr, 4 KiB at
 * most): the caller checks that it is the file it opens. 0 or -errno; the caller then
 * takes the usual way, which reports what is wrong. */
static int read_meta_path(const char *path, struct tfs_meta *m)
{
	char buf[4096];
	ssize_t n;

	n = getxattr(path, META_XATTR, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	return tfs_meta_from_json(buf, (size_t)n, m) ? -EBADMSG : 0;
}

/* open(path) with the access mode acc, and fstat of the descriptor into *fst (all 0
 * when that fails); meanwhile, when nothing maps m's memory here (the cold open of a
 * consumer that closes what it is done with), m's handle is opened (cudaIpcOpenMemHandle,
 * 30-50 µs) while the helper thread opens the file (the FUSE OPEN, 25-50 µs), instead of
 * one after the other. That mapping is only taken ahead of need, *map the reference to drop
 * once the tensor is built (from the descriptor and what its attributes confirm: it then
 * finds the mapping in the handle cache), NULL when none was taken; a failure to map is
 * left for that build to report. The descriptor or -errno. */
static int open_mapping_ahead(const char *path, int acc, const struct tfs_meta *m,
			      struct tfs_ipc_entry **map, struct stat *fst)
{
	void *base;
	int fd, w;

	*map = NULL;
	if (path[0] == '/' && m->bytes > 0 && !tfs_ipc_mapped(m) &&
	    tfs_ahead_start(path, acc | O_CLOEXEC, fst)) {
		if (tfs_ipc_acquire(m, map, &base, &w))
			*map = NULL;
		return tfs_ahead_wait();
	}
	if ((fd = open(path, acc | O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(fd, fst))
		memset(fst, 0, sizeof(*fst));
	return fd;
}

/* The tensor open_mapping_ahead opened (fd, or -errno; its attributes *fst): built from
 * m when the caller found the attributes to be the ones m was read or remembered with,
 * else (m NULL) from the metadata read through the descriptor. The early mapping is
 * dropped after: the build found it in the handle cache, or it was of another tensor.
 * tfs_open's result. */
static int opened_ahead(const char *path, int fd, const struct stat *fst,
			const struct tfs_meta *m, struct tfs_ipc_entry *map, tfs_tensor **out)
{
	int rc;

	if (fd < 0)
		rc = tfs_seterr(fd, "%s: %s", path, tfs_strerror(-fd));
	else if (m)
		rc = tensor_on_fd(fd, fst, m, out);
	else
		rc = open_owned_fd(fd, fst->st_mode ? fst : NULL, out);
	if (map)
		tfs_ipc_release(map);
	return rc;
}

/* The tensor at path, whose attributes stat gave (*st), by its metadata: remembered by
 * this process (meta_cache.c) for those attributes, or else read by path first
 * (read_meta_path), its memory mapped while the file is opened (open_mapping_ahead). The
 * tensor is built from the descriptor the open returns and its own attributes (the
 * metadata when they are still the ones stat gave, else open_owned_fd's), so a tensor
 * replaced between the stat and the open is never the one handed out, and its early
 * mapping goes. Metadata read here is remembered when the descriptor's attributes confirm
 * it. 1 when there is no metadata to go by (the caller opens as usual); else tfs_open's
 * result. */
static int open_remembered(const char *path, int acc, const struct stat *st, tfs_tensor **out)
{
	struct tfs_ipc_entry *map = NULL;
	struct tfs_fileid id;
	struct tfs_meta m;
	struct stat fst;
	int fd, same, known;

	if (!tfs_fileid_set(&id, st))
		return 1;
	known = tfs_mc_get(st, &m);
	/* Relative paths stay with the caller: the helper's working directory can differ.
	 * Metadata read here must be of the file stat found: its inode number (random, kept
	 * by renames) is st's; the descriptor is checked against *st below too, so
	 * metadata and descriptor are of one file whatever moved in between. */
	if (!known && (path[0] != '/' || read_meta_path(path, &m) || !m.ino ||
		       m.ino != (uint64_t)st->st_ino))
		return 1;
	fd = open_mapping_ahead(path, acc, &m, &map, &fst);
	same = fd >= 0 && tfs_fileid_eq(&id, &fst);
	if (same && !known)
		tfs_mc_put(st, &m);
	return opened_ahead(path, fd, &fst, same ? &m : NULL, map, out);
}

/* A process's first open of path (absolute): its metadata read by path, then its memory
 * mapped while the file is opened, with no stat before; the metadata is the descriptor's
 * when the descriptor's attributes, current after an open by path (meta_cache.c), have
 * its inode number and change time (st_ctim, in nanoseconds: every change to what a
 * client maps gives a new one). Whatever happened to the name between the read and the
 * open, the tensor is the descriptor's: otherwise open_owned_fd reads its metadata
 * through it. 1 when there is no metadata to go by (no tensor there, or a daemon that
 * does not give ino and ctime_ns), and nothing was opened; else tfs_open's result. */
static int open_first(const char *path, int acc, tfs_tensor **out)
{
	struct tfs_ipc_entry *map;
	struct tfs_meta m;
	struct stat fst;
	int fd, same;

	if (read_meta_path(path, &m) || !m.ino || m.ctime_ns <= 0)
		return 1;
	fd = open_mapping_ahead(path, acc, &m, &map, &fst);
	same = fd >= 0 && tfs_fileid_eq_meta(&m, &fst);
	if (same) {
		firsts++;
		tfs_mc_put(&fst, &m);
	}
	return opened_ahead(path, fd, &fst, same ? &m : NULL, map, out);
}

long tfs_open_first_count(void)
{
	return firsts;
}

static int open_path(const char *path, int acc, tfs_tensor **out)
{
	int fd, rc;
	struct stat st;

	/* Where this process opened path before, its metadata is likely remembered for the
	 * attributes a stat gives (answered from the kernel's cache, or the LOOKUP the open
	 * would have made); otherwise the stat would only precede the metadata's read. */
	if (acc <= O_RDWR && path[0] == '/' && !tfs_mc_path_seen(path) &&
	    (rc = open_first(path, acc, out)) != 1)
		return rc;
	/* On any failure of the stat the open below reports what is wrong. */
	if (acc <= O_RDWR && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		fd = dup_held(path, acc, &st);
		if (fd >= 0)
			return open_owned_fd(fd, &st, out);
		if ((rc = open_remembered(path, acc, &st, out)) != 1)
			return rc;
	}
	fd = open(path, acc | O_CLOEXEC);
	if (fd < 0)
		return tfs_seterr(-errno, "%s: %s", path, tfs_strerror(errno));
	/* The attributes come from the kernel's cache, current (meta_cache.c): no FUSE
	 * request. */
	return open_owned_fd(fd, fstat(fd, &st) == 0 ? &st : NULL, out);
}

int tfs_open(const char *path, int flags, tfs_tensor **out)
{
	struct stat st;
	int rc, tries = 0;

	if (!path || !out)
		return tfs_seterr(-EINVAL, "tfs_open: NULL argument");
	/* Memory that comes from the handle socket (a VMM tensor's, a host tensor's whose
	 * shared-memory name is gone) is asked for by the name of the file opened
	 * (lib/handle_socket.c): a tensor replaced by a rename or removed between the open
	 * and the request has none left, and that is ENOENT. While the path names a file, the
	 * open is made again, as if after the change: a rename replaces a name atomically,
	 * and no open of it may fail with ENOENT (names/t_open_ahead.sh). */
	do
		rc = open_path(path, flags & O_ACCMODE, out);
	while (rc == -ENOENT && ++tries < OPEN_TRIES && stat(path, &st) == 0);
	if (rc == 0 && path[0] == '/')
		tfs_mc_path_mark(path);
	return rc;
}

int tfs_open_fd(int fd, tfs_tensor **out)
{
	int dfd;

	if (fd < 0 || !out)
		return tfs_seterr(-EINVAL, "tfs_open_fd: bad argument");
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return tfs_seterr(-errno, "dup: %s", tfs_strerror(errno));
	return open_owned_fd(dfd, NULL, out);
}

int tfs_open_meta(const char *json, size_t len, tfs_tensor **out)
{
	char name[4096];             /* tfs_name_check's longest, and its NUL */
	struct tfs_meta m;

	if (!json || !out)
		return tfs_seterr(-EINVAL, "tfs_open_meta: NULL argument");
	if (!tfs_mc_get_json(json, len, &m)) {
		if (tfs_meta_from_json(json, len, &m))
			return tfs_seterr(-EBADMSG, "malformed tensor metadata JSON");
		tfs_mc_put_json(json, len, &m);
	}
	/* A VMM tensor's memory is asked of the socket by its name (docs/vmm.md). */
	if (!m.hsock[0] || tfs_meta_json_name(json, len, name, sizeof(name)))
		name[0] = '\0';
	return tfs_tensor_from_meta(&m, -1, name[0] ? name : NULL, 1, out);
}

int tfs_tensor_get_info(const tfs_tensor *t, struct tfs_tensor_info *info)
{
	if (!t || !info)
		return tfs_seterr(-EINVAL, "tfs_tensor_get_info: NULL argument");
	memset(info, 0, sizeof(*info));
	info->data = t->data;
	info->bytes = t->meta.bytes;
	info->dtype = t->meta.dtype;
	info->ndim = t->meta.shape.ndim;
	for (int i = 0; i < info->ndim; i++)
		info->shape[i] = (int64_t)t->meta.shape.dims[i];
	info->device = t->meta.device;
	info->on_host = tfs_tensor_on_host(t);
	info->writable = t->writable;
	return 0;
}

void *tfs_tensor_data(const tfs_tensor *t)
{
	if (t && t->via_fd) {
		tfs_remote_err(t, "tfs_tensor_data");
		return NULL;
	}
	return t ? t->data : NULL;
}

int tfs_remote_err(const tfs_tensor *t, const char *what)
{
	return tfs_seterr(-EREMOTE, "%s: the bytes are on node %s, whose memory does not map "
			  "here: they can be read and written (tfs_read, tfs_write) but not mapped",
			  what, t->meta.node);
}
