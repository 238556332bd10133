/* Unit tests of one message with one descriptor (core/fd_pass.h) over real socketpairs: the
 * descriptor arrives as the same open file and close-on-exec; extra descriptors and
 * oversize messages leave nothing open; a receiver at its RLIMIT_NOFILE learns that a
 * descriptor was lost; a gone peer, a full or empty socket answer errnos; a signal does not
 * cut a wait short. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd_pass.h"
#include "tap.h"

/* How many descriptors this process has open. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;       /* opendir's own */
}

static int same_file(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static void pair(int type, int sv[2])
{
	if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv)) {
		perror("socketpair");
		exit(2);
	}
}

static void test_roundtrip(void)
{
	int sv[2], fd, got, base;
	char msg[16] = "hello", in[16];
	FILE *tmp = tmpfile();
	ssize_t n;

	pair(SOCK_SEQPACKET, sv);
	fd = fileno(tmp);
	base = open_fds();
	ok(tfs_send_fd(sv[0], msg, sizeof(msg), fd, 0) == 0, "send with a descriptor");
	n = tfs_recv_fd(sv[1], in, sizeof(in), 0, &got);
	ok(n == (ssize_t)sizeof(msg) && memcmp(in, msg, sizeof(msg)) == 0, "the message arrives");
	ok(got >= 0 && got != fd && same_file(got, fd), "the descriptor is the same open file");
	ok(got >= 0 && (fcntl(got, F_GETFD) & FD_CLOEXEC), "and close-on-exec");
	if (got >= 0)
		close(got);
	ok(open_fds() == base, "the sender keeps its descriptor, nothing else is open");

	ok(tfs_send_fd(sv[0], msg, 5, -1, 0) == 0, "send without a descriptor");
	got = 99;
	n = tfs_recv_fd(sv[1], in, sizeof(in), 0, &got);
	ok(n == 5 && got == -1, "received: 5 bytes, *fd -1 (got %zd, %d)", n, got);

	got = 99;
	n = tfs_recv_fd(sv[1], in, sizeof(in), MSG_DONTWAIT, &got);
	ok(n == -EAGAIN && got == -1, "nothing there under MSG_DONTWAIT: -EAGAIN (got %zd)", n);

	/* Longer than the receiver's buffer: the rest and the descriptor are gone. */
	ok(tfs_send_fd(sv[0], msg, sizeof(msg), fd, 0) == 0, "send 16 bytes with a descriptor");
	n = tfs_recv_fd(sv[1], in, 8, 0, &got);
	ok(n == -EMSGSIZE && got == -1, "into 8 bytes: -EMSGSIZE, no descriptor (got %zd, %d)",
	   n, got);
	ok(open_fds() == base, "the cut message's descriptor was closed");

	close(sv[0]);
	n = tfs_recv_fd(sv[1], in, sizeof(in), 0, &got);
	ok(n == 0 && got == -1, "the peer closed: 0");
	ok(tfs_send_fd(sv[1], msg, sizeof(msg), fd, 0) == -EPIPE,
	   "send to a closed peer: -EPIPE, no SIGPIPE");
	close(sv[1]);
	fclose(tmp);
}

/* A peer that sends three descriptors in one message: the first is taken, the others
 * closed. */
static void test_extra(void)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 3)];
		struct cmsghdr align;
	} cbuf;
	int sv[2], fds[3], got, base;
	char msg = 'x', in;
	struct iovec iov = { .iov_base = &msg, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
			     .msg_controllen = sizeof(cbuf.buf) };
	struct cmsghdr *c;

	pair(SOCK_SEQPACKET, sv);
	for (int i = 0; i < 3; i++)
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	memset(&cbuf, 0, sizeof(cbuf));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	base = open_fds();
	ok(sendmsg(sv[0], &mh, 0) == 1, "a message with three descriptors sent");
	ok(tfs_recv_fd(sv[1], &in, 1, 0, &got) == 1 && got >= 0 && same_file(got, fds[0]),
	   "the first is received");
	ok(open_fds() == base + 1, "the other two were closed (%d open, %d before)", open_fds(),
	   base);
	if (got >= 0)
		close(got);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	close(sv[0]);
	close(sv[1]);
}

/* The highest descriptor open now. */
static int max_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int m = -1;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) > m)
			m = atoi(e->d_name);
	closedir(d);
	return m;
}

/* A receiver with no descriptor free: the kernel drops the one sent, and says so. */
static void test_lost(void)
{
	struct rlimit old, rl;
	int sv[2], got, fill[256], nf = 0, d, fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char msg[8] = "lost", in[8];
	ssize_t n;

	pair(SOCK_SEQPACKET, sv);
	ok(tfs_send_fd(sv[0], msg, sizeof(msg), fd, 0) == 0, "send with a descriptor");
	getrlimit(RLIMIT_NOFILE, &old);
	rl = old;
	rl.rlim_cur = (rlim_t)max_fd() + 1;
	ok(setrlimit(RLIMIT_NOFILE, &rl) == 0, "RLIMIT_NOFILE lowered to what is open");
	/* The free descriptors below it taken too: no new one fits. */
	while (nf < 256 && (d = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		fill[nf++] = d;
	n = tfs_recv_fd(sv[1], in, sizeof(in), 0, &got);
	setrlimit(RLIMIT_NOFILE, &old);
	ok(n == (ssize_t)sizeof(msg) && memcmp(in, msg, sizeof(msg)) == 0,
	   "the message arrives all the same (%zd)", n);
	ok(got == TFS_FD_LOST, "*fd is TFS_FD_LOST (%d)", got);
	if (got >= 0)
		close(got);
	while (nf)
		close(fill[--nf]);
	close(fd);
	close(sv[0]);
	close(sv[1]);
}

/* Stream sockets (the handle socket): a full socket under MSG_DONTWAIT is -EAGAIN. */
static void test_stream_full(void)
{
	static char big[65536];
	int sv[2], rc, sent = 0;

	pair(SOCK_STREAM, sv);
	while ((rc = tfs_send_fd(sv[0], big, sizeof(big), -1, MSG_DONTWAIT)) == 0 && sent < 4096)
		sent++;
	ok(rc == -EAGAIN || rc == -EIO, "a full stream socket under MSG_DONTWAIT: -EAGAIN or a "
	   "short send's -EIO (%d after %d sends)", rc, sent);
	close(sv[0]);
	close(sv[1]);
}

/* Several descriptors in one message (a VMM tensor of several pieces): they arrive in
 * order; more than the receiver takes are closed; a receiver without room for them all
 * keeps none and learns so. */
static void test_several(void)
{
	struct rlimit old, rl;
	int sv[2], fds[TFS_FD_PASS_MAX + 1], got[TFS_FD_PASS_MAX], n, base, fill[256], nf = 0,
	    d, all = 1;
	char msg[8] = "0 5 1 2", in[8];
	ssize_t r;

	pair(SOCK_STREAM, sv);
	for (int i = 0; i <= TFS_FD_PASS_MAX; i++)
		fds[i] = i % 2 ? open("/dev/null", O_RDONLY | O_CLOEXEC) : fileno(tmpfile());
	base = open_fds();
	ok(tfs_send_fds(sv[0], msg, sizeof(msg), fds, 3, 0) == 0, "three descriptors sent");
	r = tfs_recv_fds(sv[1], in, sizeof(in), 0, got, TFS_FD_PASS_MAX, &n);
	ok(r == (ssize_t)sizeof(msg) && n == 3 && same_file(got[0], fds[0]) &&
	   same_file(got[1], fds[1]) && same_file(got[2], fds[2]) &&
	   (fcntl(got[2], F_GETFD) & FD_CLOEXEC), "they arrive in order, close-on-exec (n %d)", n);
	for (int i = 0; i < n; i++)
		close(got[i]);
	ok(open_fds() == base, "nothing else open");
	ok(tfs_send_fds(sv[0], msg, sizeof(msg), fds, TFS_FD_PASS_MAX + 1, 0) == -EINVAL,
	   "more than TFS_FD_PASS_MAX: -EINVAL");
	ok(tfs_send_fds(sv[0], msg, sizeof(msg), fds, TFS_FD_PASS_MAX, 0) == 0,
	   "TFS_FD_PASS_MAX sent");
	r = tfs_recv_fds(sv[1], in, sizeof(in), 0, got, 2, &n);
	ok(r == (ssize_t)sizeof(msg) && n == 2 && same_file(got[1], fds[1]),
	   "a receiver of two takes the first two");
	for (int i = 0; i < n; i++)
		close(got[i]);
	ok(open_fds() == base, "the others were closed");
	ok(tfs_send_fds(sv[0], msg, sizeof(msg), fds, 0, 0) == 0, "none sent");
	r = tfs_recv_fds(sv[1], in, sizeof(in), 0, got, 4, &n);
	ok(r == (ssize_t)sizeof(msg) && n == 0, "none received");

	ok(tfs_send_fds(sv[0], msg, sizeof(msg), fds, 4, 0) == 0, "four sent to a full receiver");
	getrlimit(RLIMIT_NOFILE, &old);
	rl = old;
	rl.rlim_cur = (rlim_t)max_fd() + 3;
	setrlimit(RLIMIT_NOFILE, &rl);
	while (nf < 256 && (d = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		fill[nf++] = d;
	if (nf >= 2) {
		close(fill[--nf]);      /* room for two of the four */
		close(fill[--nf]);
	}
	r = tfs_recv_fds(sv[1], in, sizeof(in), 0, got, 4, &n);
	setrlimit(RLIMIT_NOFILE, &old);
	while (nf)
		close(fill[--nf]);
	ok(r == (ssize_t)sizeof(msg) && n == TFS_FD_LOST, "room for two of four: TFS_FD_LOST "
	   "(%zd, %d)", r, n);
	ok(open_fds() == base, "and the two that came were closed (%d open, %d before)",
	   open_fds(), base);
	for (int i = 0; i <= TFS_FD_PASS_MAX; i++)
		all &= close(fds[i]) == 0;
	ok(all, "the sender kept its descriptors");
	close(sv[0]);
	close(sv[1]);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A signal during the wait (no SA_RESTART) does not end it: the message still comes. */
static void test_eintr(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value = { .tv_usec = 20000 } };
	int sv[2], got, status;
	char in[4];
	pid_t child;
	ssize_t n;

	pair(SOCK_SEQPACKET, sv);
	sigaction(SIGALRM, &sa, NULL);
	child = fork();
	if (child == 0) {
		/* Past the alarm on any machine that runs the timer at all. */
		usleep(300000);
		_exit(tfs_send_fd(sv[0], "late", 4, -1, 0) == 0 ? 0 : 1);
	}
	setitimer(ITIMER_REAL, &it, NULL);
	n = tfs_recv_fd(sv[1], in, sizeof(in), 0, &got);
	ok(n == 4 && memcmp(in, "late", 4) == 0, "a signal during the wait: the message still "
	   "arrives (%zd)", n);
	waitpid(child, &status, 0);
	signal(SIGALRM, SIG_DFL);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	test_roundtrip();
	test_extra();
	test_lost();
	test_stream_full();
	test_several();
	test_eintr();
	printf("# %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
