/* The daemon's end of the keeper's socket (keeper.h). One request at a time: the mutex is a
 * leaf lock (the order of tensors/tensors.h, level 3: taken inside backend calls). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mem/keeper/keeper.h"
#include "log.h"
#include "strutil.h"

static struct {
	pthread_mutex_t mu;
	int fd;                 /* -1: no keeper */
	pid_t pid;
} kc = { .mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

int tfs_keeper_from_env(void)
{
	const char *s = getenv("TFS_KEEPER_FD"), *p = getenv("TFS_KEEPER_PID");
	uint64_t fd, pid;

	if (!s || !p || tfs_parse_u64(s, strlen(s), &fd) || tfs_parse_u64(p, strlen(p), &pid) ||
	    fd > 65535 || pid == 0 || pid > 0x7fffffff || fcntl((int)fd, F_GETFD) < 0) {
		unsetenv("TFS_KEEPER_FD");
		unsetenv("TFS_KEEPER_PID");
		return 0;
	}
	/* Run again through /proc/self/exe, whose name ps would show. */
	prctl(PR_SET_NAME, "tensorfs");
	/* Not inherited by what the daemon starts (a redis-server). */
	fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	kc.fd = (int)fd;
	kc.pid = (pid_t)pid;
	unsetenv("TFS_KEEPER_FD");
	unsetenv("TFS_KEEPER_PID");
	return 1;
}

int tfs_keeper_present(void)
{
	return kc.fd >= 0;
}

pid_t tfs_keeper_pid(void)
{
	return kc.fd >= 0 ? kc.pid : getpid();
}

static int recv_rep(struct tfs_keeper_rep *rep, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = rep, .iov_len = sizeof(*rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n;

	do
		n = recvmsg(kc.fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int got;

			memcpy(&got, CMSG_DATA(c), sizeof(int));
			if (fd && *fd < 0)
				*fd = got;
			else
				close(got);
		}
	}
	if (n != (ssize_t)sizeof(*rep))
		return -EPIPE;
	return 0;
}

int tfs_keeper_call(const struct tfs_keeper_req *req, struct tfs_keeper_rep *rep, int *fd)
{
	int rc;

	if (fd)
		*fd = -1;
	memset(rep, 0, sizeof(*rep));
	pthread_mutex_lock(&kc.mu);
	if (kc.fd < 0) {
		rc = -EPIPE;
	} else if (send(kc.fd, req, sizeof(*req), MSG_NOSIGNAL) != (ssize_t)sizeof(*req)) {
		rc = -EPIPE;
	} else {
		rc = recv_rep(rep, fd);
		if (rc == 0)
			rc = rep->rc;
	}
	pthread_mutex_unlock(&kc.mu);
	if (rc == -EPIPE)
		tfs_log(LOG_ERR, "the memory keeper does not answer");
	if (rc && fd && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return rc;
}

int tfs_keeper_copy(uint64_t dst_id, uint64_t dst_off, uint64_t src_id, uint64_t src_off,
		    uint64_t len)
{
	struct tfs_keeper_req req = { .op = TFS_KEEPER_COPY, .id = src_id, .size = len,
				      .dst_id = dst_id, .src_off = src_off, .dst_off = dst_off };
	struct tfs_keeper_rep rep;

	if (!tfs_keeper_present())
		return -ENOTSUP;
	return tfs_keeper_call(&req, &rep, NULL);
}

void tfs_keeper_tell(uint32_t op)
{
	struct tfs_keeper_req req = { .op = op };

	pthread_mutex_lock(&kc.mu);
	if (kc.fd >= 0 && send(kc.fd, &req, sizeof(req), MSG_NOSIGNAL) < 0)
		tfs_log(LOG_WARNING, "cannot reach the memory keeper: %s", strerror(errno));
	pthread_mutex_unlock(&kc.mu);
}

void tfs_keeper_tell_redis(int pidfd)
{
	struct tfs_keeper_req req = { .op = TFS_KEEPER_REDIS };
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &req, .iov_len = sizeof(req) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;

	if (pidfd < 0)
		return;
	memset(cbuf, 0, sizeof(cbuf));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &pidfd, sizeof(int));
	pthread_mutex_lock(&kc.mu);
	if (kc.fd >= 0 && sendmsg(kc.fd, &mh, MSG_NOSIGNAL) < 0)
		tfs_log(LOG_WARNING, "cannot reach the memory keeper: %s", strerror(errno));
	pthread_mutex_unlock(&kc.mu);
}
