/* The handle socket's server (server.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fd_pass.h"
#include "fd_request.h"
#include "handles/server.h"
#include "log.h"
#include "mem/backend.h"
#include "queue/users.h"
#include "tensors/tensors.h"

#define GROUPS_MAX 256

struct conn {
	int fd;
	uid_t uid;
	gid_t gid;
	int ngroups;            /* -1: SO_PEERGROUPS unknown: no supplementary groups */
	gid_t groups[GROUPS_MAX];
	int64_t deadline_ms;
	int passed;             /* the descriptor sent for the next request by descriptor:
	                           -1 none, TFS_FD_LOST one this process could not take */
	size_t len;
	char buf[TFS_FDREQ_MAX];
};

static struct {
	int listen, wake;
	int spare;              /* /dev/null, given up to refuse a connection (refuse_pending) */
	int allow_other;
	pthread_t thread;
	int running;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *mountpoint;
	struct conn *c[HANDLES_CONN_MAX];
	gid_t own_groups[GROUPS_MAX];
	int own_ngroups;
} hs = { .listen = -1, .wake = -1, .spare = -1 };

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int tfs_handles_default_path(const char *mountpoint, char *buf, size_t size)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	for (const char *p = mountpoint; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	if (geteuid() == 0)
		n = snprintf(buf, size, "/run/tensorfs/handles.%016llx.sock", (unsigned long long)h);
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/tensorfs/handles.%016llx.sock", xdg,
			     (unsigned long long)h);
	else
		n = snprintf(buf, size, "/tmp/tensorfs-%u/handles.%016llx.sock",
			     (unsigned)geteuid(), (unsigned long long)h);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

const char *tfs_handles_path(void)
{
	return __atomic_load_n(&hs.running, __ATOMIC_ACQUIRE) ? hs.path : NULL;
}

/* Makes the socket's folder (0755 for root, whose others must reach it; else 0700) when
 * it is missing. */
static void make_dir(const char *path)
{
	char dir[sizeof(hs.path)], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	if (mkdir(dir, geteuid() == 0 ? 0755 : 0700) && errno != EEXIST)
		tfs_log(LOG_WARNING, "handles: cannot make %s: %s", dir, strerror(errno));
}

/* The peer's file-system identity on this thread (per thread: raw syscalls, not glibc's
 * process-wide wrappers). 0, or -EACCES when it cannot be taken (a daemon not run by root
 * serves its own user only). */
static int become(const struct conn *c)
{
	if (c->uid == geteuid() && c->gid == getegid() && c->ngroups <= 0)
		return 0;
	if (geteuid() != 0)
		return c->uid == geteuid() ? 0 : -EACCES;
	if (syscall(SYS_setgroups, (size_t)(c->ngroups > 0 ? c->ngroups : 0), c->groups))
		return -EACCES;
	syscall(SYS_setfsgid, c->gid);
	syscall(SYS_setfsuid, c->uid);
	if ((uid_t)syscall(SYS_setfsuid, -1) != c->uid || (gid_t)syscall(SYS_setfsgid, -1) != c->gid)
		return -EACCES;
	return 0;
}

static void unbecome(void)
{
	if (geteuid() != 0)
		return;
	syscall(SYS_setfsuid, geteuid());
	syscall(SYS_setfsgid, getegid());
	syscall(SYS_setgroups, (size_t)hs.own_ngroups, hs.own_groups);
}

/* Is uid one that --user-queues gave a queue? The daemon already serves its queue
 * commands with its permissions, and a queue get of memory that has a descriptor is
 * mapped through this socket, so such a user is served here as a mount with allow_other
 * would serve it, though the mount itself may refuse it. */
static int queue_user(uid_t uid)
{
	for (size_t i = 0; i < tfs_qusers_count(); i++)
		if (tfs_qusers_at(i)->uid == uid)
			return 1;
	return 0;
}

/* Is the peer a user this socket serves at all? */
static int served(const struct conn *c)
{
	return hs.allow_other || c->uid == geteuid() || queue_user(c->uid);
}

/* May the peer have access to rel through the mount? 0 or -errno (EACCES, ENOENT, ...).
 * By the mount point's path, never a descriptor of the mount kept open: it would keep the
 * mount busy at the unmount. */
static int allowed(const struct conn *c, const char *rel, int access)
{
	char *full;
	int rc;

	if (!served(c))
		return -EACCES;
	if (asprintf(&full, "%s/%s", hs.mountpoint, rel) < 0)
		return -ENOMEM;
	if ((rc = become(c)) == 0)
		rc = faccessat(AT_FDCWD, full, access == TFS_FDREQ_WRITE ? R_OK | W_OK : R_OK,
			       AT_EACCESS | AT_SYMLINK_NOFOLLOW) ? -errno : 0;
	unbecome();
	free(full);
	return rc;
}

/* The inode number of the tensor open as fd on this mount, when fd grants access: 0 with
 * *ino, or -errno. The attributes the kernel has are enough (AT_STATX_DONT_SYNC): the
 * inode number of a file never changes, and a request to this daemon's own mount from
 * its one serving thread would wait on the FUSE workers. */
static int open_tensor(int fd, int access, uint64_t *ino)
{
	struct statx fx, mx;
	int fl = fcntl(fd, F_GETFL);

	/* An O_PATH descriptor is opened with no check of the file's permissions. */
	if (fl < 0 || (fl & O_PATH))
		return -EBADF;
	fl &= O_ACCMODE;
	if (fl == O_WRONLY || (access == TFS_FDREQ_WRITE && fl != O_RDWR))
		return -EACCES;
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &fx) ||
	    statx(AT_FDCWD, hs.mountpoint, AT_STATX_DONT_SYNC, STATX_TYPE, &mx))
		return -errno;
	if (fx.stx_dev_major != mx.stx_dev_major || fx.stx_dev_minor != mx.stx_dev_minor)
		return -EXDEV;                  /* not a file of this mount */
	if (!S_ISREG(fx.stx_mode))
		return -EISDIR;
	*ino = fx.stx_ino;
	return 0;
}

/* The descriptors of the memory of the tensor named rel, or when rel is "" of the one
 * whose inode number is ino, for access (export_chunks: a memory in pieces gives
 * several): 0 with fds[0..*n), sizes and *bytes, or -errno. */
static int lookup(const char *rel, uint64_t ino, int access, int *fds, uint64_t *sizes,
		  int *n, uint64_t *bytes)
{
	struct tfsd_tensor *t;
	int rc;

	if (!tfs_mem.ops->export_fd && !tfs_mem.ops->export_chunks)
		return -ENOTSUP;
	tfs_ns_lock();
	/* A tensor found by its open descriptor may have lost its name: its memory lives
	 * while it is open, and the descriptor proves the access. */
	t = rel[0] ? tfs_table_find(rel) : tfs_table_find_ino(ino);
	if (!t || (rel[0] && !t->linked))
		rc = -ENOENT;
	else if (!t->alloc)
		rc = -ENODATA;
	else if (tfs_mem.ops->export_chunks)
		rc = tfs_mem.ops->export_chunks(tfs_mem.be, t->alloc, access == TFS_FDREQ_WRITE,
						fds, sizes, TFS_FDREP_FDS_MAX);
	else
		rc = tfs_mem.ops->export_fd(tfs_mem.be, t->alloc, access == TFS_FDREQ_WRITE,
					    fds);
	if (rc >= 0) {
		*n = tfs_mem.ops->export_chunks ? rc : 1;
		*bytes = t->meta.bytes;
		rc = 0;
	}
	tfs_ns_unlock();
	return rc;
}

/* One reply, with fds[0..n) (sizes: each one's, said when n > 1). 0 or -1 (the
 * connection goes). */
static int reply(struct conn *c, int rc, uint64_t bytes, const int *fds, const uint64_t *sizes,
		 int n)
{
	char line[TFS_FDREP_MAX];
	int len = tfs_fdrep_format_chunks(line, rc, bytes, sizes, rc < 0 ? 1 : n);

	if (rc < 0 || len < 0)
		n = 0;
	if (len < 0)
		len = tfs_fdrep_format(line, -EIO, 0);
	/* Non-blocking: a client that does not read its replies loses its connection. */
	return tfs_send_fds(c->fd, line, (size_t)len, fds, n, MSG_DONTWAIT) ? -1 : 0;
}

static void drop(int i)
{
	if (hs.c[i]->passed >= 0)
		close(hs.c[i]->passed);
	close(hs.c[i]->fd);
	free(hs.c[i]);
	hs.c[i] = NULL;
}

/* Reads what c sent and answers every complete request. -1 when it goes. */
static int serve(struct conn *c)
{
	struct tfs_fdreq req;
	ssize_t n;
	int rc, pfd = -1;

	n = tfs_recv_fd(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT, &pfd);
	if (n == 0 || (n < 0 && n != -EAGAIN && n != -EINTR))
		return -1;
	if (pfd != -1) {
		/* One descriptor goes with one request by descriptor, which a client sends
		 * only once the one before was answered. */
		if (c->passed != -1) {
			if (pfd >= 0)
				close(pfd);
			reply(c, -EINVAL, 0, NULL, NULL, 0);
			return -1;
		}
		c->passed = pfd;
	}
	if (n > 0)
		c->len += (size_t)n;
	while ((rc = tfs_fdreq_parse(c->buf, c->len, &req)) != -EAGAIN) {
		uint64_t bytes = 0, ino = 0, sizes[TFS_FDREP_FDS_MAX];
		int fds[TFS_FDREP_FDS_MAX], nfd = 0;

		if (rc) {
			reply(c, rc, 0, NULL, NULL, 0);
			return -1;      /* the stream cannot be trusted past garbage */
		}
		if (req.path[0]) {
			rc = allowed(c, req.path, req.access);
		} else if (c->passed == -1) {
			rc = -EBADF;
		} else if (c->passed == TFS_FD_LOST) {
			rc = -ENFILE;
		} else {
			rc = served(c) ? open_tensor(c->passed, req.access, &ino) : -EACCES;
			close(c->passed);
		}
		if (!req.path[0])
			c->passed = -1;
		if (rc == 0)
			rc = lookup(req.path, ino, req.access, fds, sizes, &nfd, &bytes);
		if (rc == -EPERM)
			rc = -EACCES;
		/* The daemon's table is full, not the client's: EMFILE would say the latter. */
		if (rc == -EMFILE)
			rc = -ENFILE;
		n = reply(c, rc, bytes, fds, sizes, nfd);
		while (nfd > 0)
			close(fds[--nfd]);
		memmove(c->buf, c->buf + req.used, c->len - req.used);
		c->len -= req.used;
		c->deadline_ms = now_ms() + HANDLES_IDLE_MS;
		if (n)
			return -1;
	}
	return 0;
}

/* Out of descriptors, a connection that cannot be accepted stays pending and wakes the
 * loop at once, for ever. The spare descriptor makes room to take it and answer ENFILE;
 * without one (another thread took its number meanwhile) the loop waits a moment. */
static void refuse_pending(void)
{
	int fd;

	if (hs.spare < 0) {
		usleep(HANDLES_NOFILE_WAIT_MS * 1000);
		hs.spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
		return;
	}
	close(hs.spare);
	fd = accept4(hs.listen, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0) {
		struct conn tmp = { .fd = fd };

		reply(&tmp, -ENFILE, 0, NULL, NULL, 0);
		close(fd);
	}
	hs.spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void take(void)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred), gl;
	struct conn *c;
	int fd, slot = -1;

	fd = accept4(hs.listen, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
		refuse_pending();
		return;
	}
	if (fd < 0)
		return;
	for (int i = 0; i < HANDLES_CONN_MAX && slot < 0; i++)
		if (!hs.c[i])
			slot = i;
	c = slot >= 0 ? calloc(1, sizeof(*c)) : NULL;
	if (!c || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl)) {
		/* Full: the client hears why at once rather than waiting. */
		struct conn tmp = { .fd = fd };

		reply(&tmp, slot < 0 ? -EAGAIN : -ENOMEM, 0, NULL, NULL, 0);
		close(fd);
		free(c);
		return;
	}
	c->fd = fd;
	c->passed = -1;
	c->uid = cred.uid;
	c->gid = cred.gid;
	gl = sizeof(c->groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, c->groups, &gl) == 0)
		c->ngroups = (int)(gl / sizeof(gid_t));
	else
		c->ngroups = -1;
	c->deadline_ms = now_ms() + HANDLES_IDLE_MS;
	hs.c[slot] = c;
}

static void *loop(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p[2 + HANDLES_CONN_MAX];
		int idx[HANDLES_CONN_MAX], np = 2, timeout = -1;
		int64_t now = now_ms();

		p[0] = (struct pollfd){ .fd = hs.wake, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = hs.listen, .events = POLLIN };
		for (int i = 0; i < HANDLES_CONN_MAX; i++) {
			int64_t left;

			if (!hs.c[i])
				continue;
			left = hs.c[i]->deadline_ms - now;
			if (left <= 0) {
				drop(i);
				continue;
			}
			if (timeout < 0 || left < timeout)
				timeout = (int)left;
			idx[np - 2] = i;
			p[np++] = (struct pollfd){ .fd = hs.c[i]->fd, .events = POLLIN };
		}
		if (poll(p, (nfds_t)np, timeout) < 0)
			continue;
		if (p[0].revents)
			break;
		for (int j = 2; j < np; j++)
			if (p[j].revents && serve(hs.c[idx[j - 2]]))
				drop(idx[j - 2]);
		if (p[1].revents)
			take();
	}
	for (int i = 0; i < HANDLES_CONN_MAX; i++)
		if (hs.c[i])
			drop(i);
	return NULL;
}

int tfs_handles_start(const char *path, const char *mountpoint, int allow_other)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int rc;

	if (path) {
		if (strlen(path) >= sizeof(hs.path) || path[0] != '/') {
			tfs_log(LOG_ERR, "handles: handle_socket takes an absolute path under %zu "
				"bytes", sizeof(hs.path));
			return -ENAMETOOLONG;
		}
		snprintf(hs.path, sizeof(hs.path), "%s", path);
	} else if ((rc = tfs_handles_default_path(mountpoint, hs.path, sizeof(hs.path)))) {
		return rc;
	}
	hs.mountpoint = strdup(mountpoint);
	hs.allow_other = allow_other;
	hs.own_ngroups = getgroups(GROUPS_MAX, hs.own_groups);
	if (hs.own_ngroups < 0)
		hs.own_ngroups = 0;
	make_dir(hs.path);
	/* A socket a daemon of this mount left behind (a crash) goes; anything else there
	 * stays, and the start fails. */
	if (lstat(hs.path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(hs.path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", hs.path);
	hs.listen = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	hs.wake = eventfd(0, EFD_CLOEXEC);
	hs.spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (!hs.mountpoint || hs.listen < 0 || hs.wake < 0 || hs.spare < 0 ||
	    bind(hs.listen, (struct sockaddr *)&sa, sizeof(sa)) || chmod(hs.path, 0666) ||
	    listen(hs.listen, HANDLES_CONN_MAX)) {
		rc = -errno;
		tfs_log(LOG_ERR, "handles: cannot serve %s: %s", hs.path, strerror(-rc));
		goto fail;
	}
	if ((rc = -pthread_create(&hs.thread, NULL, loop, NULL))) {
		unlink(hs.path);
		goto fail;
	}
	__atomic_store_n(&hs.running, 1, __ATOMIC_RELEASE);
	tfs_log(LOG_INFO, "handles: descriptors of tensors served on %s", hs.path);
	return 0;
fail:
	if (hs.listen >= 0)
		close(hs.listen);
	if (hs.wake >= 0)
		close(hs.wake);
	if (hs.spare >= 0)
		close(hs.spare);
	hs.listen = hs.wake = hs.spare = -1;
	free(hs.mountpoint);
	hs.mountpoint = NULL;
	return rc ? rc : -EIO;
}

void tfs_handles_stop(void)
{
	uint64_t one = 1;

	if (!__atomic_load_n(&hs.running, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&hs.running, 0, __ATOMIC_RELEASE);
	if (write(hs.wake, &one, sizeof(one)) != sizeof(one))
		tfs_log(LOG_WARNING, "handles: cannot wake the server");
	pthread_join(hs.thread, NULL);
	unlink(hs.path);
	close(hs.listen);
	close(hs.wake);
	if (hs.spare >= 0)
		close(hs.spare);
	hs.listen = hs.wake = hs.spare = -1;
	free(hs.mountpoint);
	hs.mountpoint = NULL;
}
