/* One message with at most one descriptor (fd_pass.h). */
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
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = sizeof(cbuf.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)len ? 0 : -EIO;
}

ssize_t tfs_recv_fd(int sock, void *buf, size_t len, int flags, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * FD_PASS_ROOM)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
			     .msg_controllen = sizeof(cbuf.buf) };
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = got;
			else
				close(got);
		}
	}
	if (mh.msg_flags & MSG_TRUNC) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EMSGSIZE;
	}
	/* Cut control data and nothing received: the kernel could not install the
	 * descriptor here (EMFILE), or our room was too small for even one, which it is not. */
	if ((mh.msg_flags & MSG_CTRUNC) && *fd < 0)
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
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
			     .msg_controllen = sizeof(cbuf.buf) };
	ssize_t r;
	int k = 0;

	*n = 0;
	if (max > TFS_FD_PASS_MAX)
		max = TFS_FD_PASS_MAX;
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
			if (k < max)
				fds[k++] = got;
			else
				close(got);
		}
	}
	if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		/* Cut: a part of what was sent is missing, so none of it is of use. */
		while (k > 0)
			close(fds[--k]);
		if (mh.msg_flags & MSG_TRUNC)
			return -EMSGSIZE;
		*n = TFS_FD_LOST;
		return r;
	}
	*n = k;
	return r;
}
