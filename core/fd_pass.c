/* One message with its descriptors (fd_pass.h). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fd_pass.h"

/* Room for a few descriptors: a peer that sends more than one loses the rest (closed
 * here), but what it meant to send first still arrives. */
#define FD_PASS_ROOM 4

int tfs_send_fd(int sock, const void *buf, size_t len, int fd, int flags)
{
	return tfs_send_fds(sock, buf, len, &fd, fd >= 0, flags);
}

/* recvmsg into buf with ctl as the control room, retried on EINTR: the descriptors that
 * came, in order, into fds[0..*k) up to max, the rest closed; *mflags the message's
 * flags. The bytes received, or -errno (nothing taken). */
static ssize_t recv_rights(int sock, void *buf, size_t len, int flags, void *ctl,
			   size_t ctllen, int *fds, int max, int *k, int *mflags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			     .msg_controllen = ctllen };
	ssize_t r;

	*k = 0;
	do
		r = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*k < max)
				fds[(*k)++] = got;
			else
				close(got);
		}
	}
	*mflags = mh.msg_flags;
	return r;
}

ssize_t tfs_recv_fd(int sock, void *buf, size_t len, int flags, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * FD_PASS_ROOM)];
		struct cmsghdr align;
	} cbuf;
	int k, mflags;
	ssize_t n = recv_rights(sock, buf, len, flags, cbuf.buf, sizeof(cbuf.buf), fd, 1, &k,
				&mflags);

	if (n < 0 || !k)
		*fd = -1;
	if (n < 0)
		return n;
	if (mflags & MSG_TRUNC) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EMSGSIZE;
	}
	/* Cut control data and nothing received: the kernel could not install the
	 * descriptor here (EMFILE), or our room was too small for even one, which it is not. */
	if ((mflags & MSG_CTRUNC) && *fd < 0)
		*fd = TFS_FD_LOST;
	return n;
}

int tfs_send_fds(int sock, const void *buf, size_t len, const int *fds, int n, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * TFS_FD_PASS_MAX)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	if (n < 0 || n > TFS_FD_PASS_MAX)
		return -EINVAL;
	if (n > 0) {
		struct cmsghdr *c;

		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
	}
	do
		r = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r == (ssize_t)len ? 0 : -EIO;
}

ssize_t tfs_recv_fds(int sock, void *buf, size_t len, int flags, int *fds, int max, int *n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * (TFS_FD_PASS_MAX + FD_PASS_ROOM))];
		struct cmsghdr align;
	} cbuf;
	int k, mflags;
	ssize_t r;

	*n = 0;
	if (max > TFS_FD_PASS_MAX)
		max = TFS_FD_PASS_MAX;
	r = recv_rights(sock, buf, len, flags, cbuf.buf, sizeof(cbuf.buf), fds, max, &k, &mflags);
	if (r < 0)
		return r;
	if ((mflags & (MSG_TRUNC | MSG_CTRUNC))) {
		/* Cut: a part of what was sent is missing, so none of it is of use. */
		while (k > 0)
			close(fds[--k]);
		if (mflags & MSG_TRUNC)
			return -EMSGSIZE;
		*n = TFS_FD_LOST;
		return r;
	}
	*n = k;
	return r;
}
