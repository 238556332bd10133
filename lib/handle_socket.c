/* The client's end of the handle socket (docs/holders.md#handles-as-capabilities): a
 * tensor's memory as a descriptor from the daemon, asked for by the tensor's path in the
 * mount, found from the open file of the tensor. Used where the shared-memory name a host
 * handle carries is gone (its directory swept by a tensorfs that knows no keeper marks):
 * the memory lives on in the daemon and its keeper, and the socket hands it out after the
 * same permission check; and for --memory vmm tensors, whose memory comes only this way
 * (docs/vmm.md), another node's on this machine included: its owner's socket, found
 * through the owner's mount. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "client_internal.h"
#include "fd_pass.h"
#include "fd_request.h"

#define HSOCK_TIMEOUT_S 10
/* How many names of a descriptor's tensor are asked for before it counts as nameless
 * (tfs_hsock_fetch): each try follows a rename that moved it meanwhile. */
#define HSOCK_NAME_TRIES 8
/* The tensorfs mounts looked at for another node's tensor (tfs_hsock_fetch_owner). */
#define OWNER_MOUNTS_MAX 64

/* The path of the tensor open as tfd relative to its mount's root, into out, and the
 * absolute path the kernel gives for the descriptor into abs (PATH_MAX bytes): that path
 * less its longest leading folder on another device. 0 or -ENOENT. */
static int name_in_mount(int tfd, char *out, size_t size, char *abs)
{
	char proc[32];
	struct stat st, pst;
	size_t root;
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", tfd);
	n = readlink(proc, abs, PATH_MAX - 1);
	if (n <= 1 || (size_t)n >= PATH_MAX - 1 || abs[0] != '/' || fstat(tfd, &st))
		return -ENOENT;
	abs[n] = '\0';
	root = (size_t)(strrchr(abs, '/') - abs);       /* abs[0, root): its folder */
	while (root > 0) {
		size_t up;
		int rc;

		abs[root] = '\0';
		up = (size_t)(strrchr(abs, '/') - abs);
		abs[root] = '/';
		if (up == 0) {
			rc = stat("/", &pst);
		} else {
			abs[up] = '\0';
			rc = stat(abs, &pst);
			abs[up] = '/';
		}
		if (rc || pst.st_dev != st.st_dev)
			break;
		root = up;
	}
	if ((size_t)n - root - 1 >= size)
		return -ENOENT;
	memcpy(out, abs + root + 1, (size_t)n - root);
	return 0;
}

/* Whether path names the file st describes now (the same inode of the same mount). */
static int names_file(const char *path, const struct stat *st)
{
	struct stat now;

	return stat(path, &now) == 0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino;
}

/* One request on a new connection, for the tensor named name or, name NULL, for the one
 * open as tfd (sent with the request): 0 with the memory's descriptors *mem and the
 * tensor's size *bytes, or -errno (the reply's included). */
static int ask(const char *sock, int access, const char *name, int tfd,
	       struct tfs_hsock_mem *mem, uint64_t *bytes)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = HSOCK_TIMEOUT_S };
	char req[TFS_FDREQ_MAX + 1], line[TFS_FDREP_MAX];
	int fds[TFS_FDREP_FDS_MAX], s, len, rc, got = 0, n = 0;
	uint64_t sizes[TFS_FDREP_FDS_MAX];
	ssize_t r;

	if (strlen(sock) >= sizeof(sa.sun_path) ||
	    (len = tfs_fdreq_format(req, sizeof(req), access, name)) < 0)
		return -EINVAL;
	memcpy(sa.sun_path, sock, strlen(sock));
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		rc = -errno;
		goto out;
	}
	if ((rc = tfs_send_fd(s, req, (size_t)len, name ? -1 : tfd, 0)))
		goto out;
	r = tfs_recv_fds(s, line, sizeof(line), 0, fds, TFS_FDREP_FDS_MAX, &got);
	if (got == TFS_FD_LOST) {
		/* The daemon sent them, but this process has no descriptor left for them. */
		got = 0;
		rc = -EMFILE;
		goto out;
	}
	rc = r <= 0 ? -EPIPE : tfs_fdrep_parse_chunks(line, (size_t)r, bytes, sizes, &n);
	/* As many descriptors as the line says, no fewer, no more. */
	if (rc == 0 && got != n)
		rc = -EBADMSG;
	if (rc == 0) {
		mem->n = n;
		memcpy(mem->fd, fds, (size_t)n * sizeof(int));
		memcpy(mem->size, sizes, (size_t)n * sizeof(uint64_t));
		got = 0;
	}
out:
	while (got > 0)
		close(fds[--got]);
	close(s);
	return rc;
}

void tfs_hsock_mem_close(struct tfs_hsock_mem *mem)
{
	while (mem->n > 0)
		close(mem->fd[--mem->n]);
}

/* One descriptor from a fetch of mem: -EBADMSG for memory in pieces, which the caller
 * cannot take. */
static int one(int rc, struct tfs_hsock_mem *mem, int *memfd)
{
	if (rc)
		return rc;
	if (mem->n != 1) {
		tfs_hsock_mem_close(mem);
		return -EBADMSG;
	}
	*memfd = mem->fd[0];
	return 0;
}

/* The memory for writing when *writable and allowed, else for reading (*writable 0). */
static int fetch(const char *sock, const char *name, int tfd, int *writable,
		 struct tfs_hsock_mem *mem, uint64_t *bytes)
{
	uint64_t b;
	int rc;

	if (!bytes)
		bytes = &b;
	if (*writable) {
		rc = ask(sock, TFS_FDREQ_WRITE, name, tfd, mem, bytes);
		if (rc != -EACCES)
			return rc;
		*writable = 0;
	}
	return ask(sock, TFS_FDREQ_READ, name, tfd, mem, bytes);
}

int tfs_hsock_fetch_name_mem(const char *sock, const char *name, int *writable,
			     struct tfs_hsock_mem *mem, uint64_t *bytes)
{
	return fetch(sock, name, -1, writable, mem, bytes);
}

int tfs_hsock_fetch_name(const char *sock, const char *name, int *writable, int *memfd,
			 uint64_t *bytes)
{
	struct tfs_hsock_mem mem;

	return one(tfs_hsock_fetch_name_mem(sock, name, writable, &mem, bytes), &mem, memfd);
}

int tfs_hsock_fetch_mem(int tfd, int *writable, struct tfs_hsock_mem *mem)
{
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char name[TFS_FDREQ_PATH_MAX + 1], abs[PATH_MAX];
	struct stat st;
	ssize_t n;
	int rc = -ENOENT;

	if (tfd < 0)
		return -ENOTSUP;
	n = fgetxattr(tfd, "user.tensor.handle_socket", sock, sizeof(sock) - 1);
	if (n <= 0)
		return -ENOTSUP;
	sock[n] = '\0';
	if (fstat(tfd, &st))
		return -errno;
	/* The socket takes a name, and the descriptor's tensor may lose its own meanwhile:
	 * renamed (its new name is asked next), or replaced or removed (an open tensor with
	 * no name: none to ask, -ENOENT). The answer counts only when the name was the
	 * descriptor's before and after it, so another tensor renamed over the name in
	 * between is never mapped as this one. */
	for (int i = 0; i < HSOCK_NAME_TRIES && st.st_nlink > 0; i++) {
		if (name_in_mount(tfd, name, sizeof(name), abs) || !names_file(abs, &st))
			continue;
		rc = tfs_hsock_fetch_name_mem(sock, name, writable, mem, NULL);
		if (rc && rc != -ENOENT)
			return rc;
		if (names_file(abs, &st))
			return rc;
		if (rc == 0)
			tfs_hsock_mem_close(mem);
		rc = -ENOENT;
	}
	/* No name left to ask by (the tensor replaced or removed since it was opened, or
	 * renamed on every try): the descriptor itself is sent, which the daemon knows its
	 * tensor by. A daemon that does not take it answers EINVAL. */
	if (rc == -ENOENT) {
		int w = *writable, r = fetch(sock, NULL, tfd, &w, mem, NULL);

		if (r != -EINVAL) {
			*writable = w;
			rc = r;
		}
	}
	return rc;
}

int tfs_hsock_fetch(int tfd, int *writable, int *memfd)
{
	struct tfs_hsock_mem mem;

	return one(tfs_hsock_fetch_mem(tfd, writable, &mem), &mem, memfd);
}

/* The tensorfs mounts looked at for another node's tensor: the one it was opened on
 * (own), and the others whose daemon runs as the same user. */
struct owner_mounts {
	dev_t own;
	long own_uid;                /* own's daemon's uid; -1 while not found */
	struct candidate {
		char mp[PATH_MAX];
		long uid;
	} *c;
	int n, max;
};

static int add_tensorfs(const struct tfs_mount *m, void *arg)
{
	struct owner_mounts *o = arg;

	if (strcmp(m->fstype, "fuse.tensorfs"))
		return 0;
	if (m->dev == o->own) {
		o->own_uid = m->user_id;
	} else if (strlen(m->mp) < PATH_MAX) {
		strcpy(o->c[o->n].mp, m->mp);
		o->c[o->n++].uid = m->user_id;
	}
	return o->n == o->max;
}

/* The handle socket a mount names, into sock (size bytes): 0, or -ENOENT when it names
 * none or one that uid (the mount's daemon's) did not make. */
static int socket_of(const char *mp, uid_t uid, char *sock, size_t size)
{
	struct stat st;
	ssize_t len = getxattr(mp, "user.tensor.handle_socket", sock, size - 1);

	if (len <= 0)
		return -ENOENT;
	sock[len] = '\0';
	return lstat(sock, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == uid ? 0 : -ENOENT;
}

/* Whether path is the tensor m describes: a file with m's inode number (random, made with
 * the tensor, the same on every node's mount) and size. */
static int is_tensor(const char *path, const struct tfs_meta *m)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_ino == m->ino &&
	       (uint64_t)st.st_size == m->bytes;
}

int tfs_hsock_fetch_owner_mem(int tfd, const struct tfs_meta *m, int *writable,
			      struct tfs_hsock_mem *mem)
{
	char name[TFS_FDREQ_PATH_MAX + 1], abs[PATH_MAX], path[PATH_MAX];
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct owner_mounts o = { .own_uid = -1, .max = OWNER_MOUNTS_MAX };
	struct stat st;
	int rc = -ENOENT;

	if (tfd < 0 || !m->ino || fstat(tfd, &st) || name_in_mount(tfd, name, sizeof(name), abs))
		return -ENOENT;
	if (!(o.c = malloc(OWNER_MOUNTS_MAX * sizeof(*o.c))))
		return -ENOMEM;
	o.own = st.st_dev;
	tfs_mounts_each(add_tensorfs, &o);
	/* Any user may mount a FUSE file system of type fuse.tensorfs: only a mount whose
	 * daemon runs as the one of the mount the tensor was opened on, with a socket that
	 * user made, is asked, so that no other user's daemon can hand out memory as the
	 * tensor's. */
	for (int i = 0; i < o.n && o.own_uid >= 0; i++) {
		uint64_t bytes = 0;
		int w = *writable, r;

		/* Only the owner's daemon has the tensor in its table; the others answer
		 * ENOENT. Its inode number before and after the answer tells that the name
		 * was the tensor's throughout. */
		if (o.c[i].uid != o.own_uid ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", o.c[i].mp, name) >= sizeof(path) ||
		    !is_tensor(path, m) || socket_of(o.c[i].mp, (uid_t)o.own_uid, sock, sizeof(sock)))
			continue;
		r = tfs_hsock_fetch_name_mem(sock, name, &w, mem, &bytes);
		if (r == 0 && (bytes != m->bytes || !is_tensor(path, m))) {
			tfs_hsock_mem_close(mem);
			r = -ESTALE;
		}
		if (r == 0) {
			*writable = w;
			rc = 0;
			break;
		}
		/* The owner refused: that is the answer. */
		if (r == -EACCES) {
			rc = r;
			break;
		}
	}
	free(o.c);
	return rc;
}

int tfs_hsock_fetch_owner(int tfd, const struct tfs_meta *m, int *writable, int *memfd)
{
	struct tfs_hsock_mem mem;

	return one(tfs_hsock_fetch_owner_mem(tfd, m, writable, &mem), &mem, memfd);
}
