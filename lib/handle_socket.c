/* The client's end of the handle socket (docs/holders.md#handles-as-capabilities): a
 * tensor's memory as a descriptor from the daemon, asked for by the tensor's path in the
 * mount, found from the open file of the tensor. Used where the shared-memory name a host
 * handle carries is gone (its directory swept by a tensorfs that knows no keeper marks):
 * the memory lives on in the daemon and its keeper, and the socket hands it out after the
 * same permission check. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
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

/* The path of the tensor open as tfd relative to its mount's root, into out: the absolute
 * path the kernel gives for the descriptor, less its longest leading folder on another
 * device. 0 or -ENOENT. */
static int name_in_mount(int tfd, char *out, size_t size)
{
	char proc[32], abs[PATH_MAX];
	struct stat st, pst;
	size_t root;
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", tfd);
	n = readlink(proc, abs, sizeof(abs) - 1);
	if (n <= 1 || (size_t)n >= sizeof(abs) - 1 || abs[0] != '/' || fstat(tfd, &st))
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

/* One request on a new connection: 0 with *memfd and the tensor's size *bytes, or -errno
 * (the reply's included). */
static int ask(const char *sock, int access, const char *name, int *memfd, uint64_t *bytes)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = HSOCK_TIMEOUT_S };
	char req[TFS_FDREQ_MAX + 1], line[TFS_FDREP_MAX];
	int s, len, rc, got = -1;
	ssize_t n;

	if (strlen(sock) >= sizeof(sa.sun_path) ||
	    (len = tfs_fdreq_format(req, sizeof(req), access, name)) < 0)
		return -EINVAL;
	memcpy(sa.sun_path, sock, strlen(sock));
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(s, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(s, req, (size_t)len, MSG_NOSIGNAL) != len) {
		rc = -errno;
		goto out;
	}
	n = tfs_recv_fd(s, line, sizeof(line), 0, &got);
	if (got == TFS_FD_LOST) {
		/* The daemon sent it, but this process has no descriptor left for it. */
		rc = -EMFILE;
		goto out;
	}
	rc = n <= 0 ? -EPIPE : tfs_fdrep_parse(line, (size_t)n, bytes);
	if (rc == 0 && got < 0)
		rc = -EBADMSG;
	if (rc == 0) {
		*memfd = got;
		got = -1;
	}
out:
	if (got >= 0)
		close(got);
	close(s);
	return rc;
}

int tfs_hsock_fetch_name(const char *sock, const char *name, int *writable, int *memfd,
			 uint64_t *bytes)
{
	uint64_t b;
	int rc;

	if (!bytes)
		bytes = &b;
	if (*writable) {
		rc = ask(sock, TFS_FDREQ_WRITE, name, memfd, bytes);
		if (rc != -EACCES)
			return rc;
		*writable = 0;
	}
	return ask(sock, TFS_FDREQ_READ, name, memfd, bytes);
}

int tfs_hsock_fetch(int tfd, int *writable, int *memfd)
{
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char name[TFS_FDREQ_PATH_MAX + 1];
	ssize_t n;
	int rc;

	if (tfd < 0)
		return -ENOTSUP;
	n = fgetxattr(tfd, "user.tensor.handle_socket", sock, sizeof(sock) - 1);
	if (n <= 0)
		return -ENOTSUP;
	sock[n] = '\0';
	if ((rc = name_in_mount(tfd, name, sizeof(name))))
		return rc;
	return tfs_hsock_fetch_name(sock, name, writable, memfd, NULL);
}
