/* The daemon's end of the keeper's socket (keeper.h). One request at a time: the mutex is a
 * leaf lock (the order of tensors/tensors.h, level 3: taken inside backend calls; the
 * handover registry's is taken under it). With two holders (handover.h) a keeper that
 * died is replaced under the mutex: by the watcher thread as soon as its socket hangs up,
 * or by the call that found it gone, which then sends its request again. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mem/keeper/handover.h"
#include "mem/keeper/keeper.h"
#include "fd_pass.h"
#include "log.h"
#include "strutil.h"

static struct {
	pthread_mutex_t mu;
	int fd;                 /* -1: no keeper */
	pid_t pid;
	int bye;                /* BYE sent: no keeper is started again */
	int watching;
	unsigned gen;           /* counts the sockets: the watcher's may be closed under it */
	struct timespec tried;  /* the last start of a new keeper */
} kc = { .mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

/* Starts a new keeper in place of the one that is gone (handover.h). Called with kc.mu.
 * At most one try a second, so that calls while none can start do not each fork. 0 with
 * kc.fd the new keeper's socket, or -EPIPE. */
static int replace_keeper(void)
{
	struct timespec now;
	pid_t pid;
	int sock, rc;

	if (kc.fd >= 0) {
		close(kc.fd);
		kc.fd = -1;
	}
	if (kc.bye || !tfs_handover_enabled())
		return -EPIPE;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (kc.tried.tv_sec && now.tv_sec - kc.tried.tv_sec < 1)
		return -EPIPE;
	kc.tried = now;
	tfs_log(LOG_ERR, "the memory keeper (pid %d) is gone: starting a new one, which the "
		"daemon hands its memory", (int)kc.pid);
	if ((rc = tfs_handover_spawn(&sock, &pid))) {
		tfs_log(LOG_ERR, "cannot start a new memory keeper: %s (trying again)",
			strerror(-rc));
		return -EPIPE;
	}
	kc.fd = sock;
	kc.gen++;
	__atomic_store_n(&kc.pid, pid, __ATOMIC_RELAXED);
	return 0;
}

/* Follows the keeper's socket: a hang-up is its death, and a new one starts at once. */
static void *watch(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p = { .events = POLLRDHUP };
		unsigned gen;
		int gone;

		pthread_mutex_lock(&kc.mu);
		if (kc.bye) {
			pthread_mutex_unlock(&kc.mu);
			return NULL;
		}
		if (kc.fd < 0)
			replace_keeper();
		p.fd = kc.fd;
		gen = kc.gen;
		pthread_mutex_unlock(&kc.mu);
		if (p.fd < 0) {
			sleep(1);
			continue;
		}
		/* A second at most: a call may replace the socket meanwhile. */
		if (poll(&p, 1, 1000) <= 0)
			continue;
		gone = p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL);
		pthread_mutex_lock(&kc.mu);
		if (gone && kc.gen == gen && kc.fd == p.fd && !kc.bye)
			replace_keeper();
		pthread_mutex_unlock(&kc.mu);
	}
}

void tfs_keeper_two_holders(void)
{
	pthread_attr_t at;
	pthread_t t;

	if (kc.fd < 0 || kc.watching || tfs_handover_enable())
		return;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, watch, NULL))
		tfs_log(LOG_WARNING, "keeper: no thread to follow the keeper: a new one starts "
			"at the next call after it died");
	else
		kc.watching = 1;
	pthread_attr_destroy(&at);
}

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
	return kc.fd >= 0 || kc.watching ? __atomic_load_n(&kc.pid, __ATOMIC_RELAXED) : getpid();
}

/* The reply, with its descriptor in *fd (NULL: none wanted, any closed). 0; -EMFILE when
 * a descriptor came that this process could not take (its RLIMIT_NOFILE: the reply is in
 * *rep all the same); -EPIPE when the keeper is gone or answered no reply. */
static int recv_rep(struct tfs_keeper_rep *rep, int *fd)
{
	int got;
	ssize_t n = tfs_recv_fd(kc.fd, rep, sizeof(*rep), 0, &got);

	if (got >= 0 && (!fd || n != (ssize_t)sizeof(*rep)))
		close(got);
	else if (got >= 0)
		*fd = got;
	if (n != (ssize_t)sizeof(*rep))
		return -EPIPE;
	return got == TFS_FD_LOST ? -EMFILE : 0;
}

/* Frees allocation id, whose ALLOC reply came without its descriptor: nothing of it
 * stays. Called with kc.mu. */
static void give_back_lost(uint64_t id)
{
	struct tfs_keeper_req fr = { .op = TFS_KEEPER_FREE, .id = id };
	struct tfs_keeper_rep rep;

	if (tfs_send_fd(kc.fd, &fr, sizeof(fr), -1, 0) || recv_rep(&rep, NULL) || rep.rc)
		tfs_log(LOG_WARNING, "keeper: allocation %llu, whose descriptor was lost, may "
			"stay until the keeper ends", (unsigned long long)id);
}

/* One exchange. Called with kc.mu. */
static int exchange(const struct tfs_keeper_req *req, struct tfs_keeper_rep *rep, int *fd)
{
	int rc;

	if (fd && *fd >= 0)
		close(*fd);
	if (fd)
		*fd = -1;
	memset(rep, 0, sizeof(*rep));
	if (kc.fd < 0)
		return -EPIPE;
	if (send(kc.fd, req, sizeof(*req), MSG_NOSIGNAL) != (ssize_t)sizeof(*req))
		return -EPIPE;
	rc = recv_rep(rep, fd);
	if (rc == -EMFILE && rep->rc == 0 && req->op == TFS_KEEPER_ALLOC) {
		/* Made, but its descriptor could not reach us: it goes back at once. */
		give_back_lost(rep->id);
		return -EMFILE;
	}
	return rc ? rc : rep->rc;
}

int tfs_keeper_call(const struct tfs_keeper_req *req, struct tfs_keeper_rep *rep, int *fd)
{
	int rc;

	if (fd)
		*fd = -1;
	pthread_mutex_lock(&kc.mu);
	rc = exchange(req, rep, fd);
	/* The keeper died under the call (or before it): a new one holds the same memory
	 * under the same ids, so the request goes again. An ALLOC the dead one answered
	 * never reached us, and the new keeper removes its object (keeper_host.c). */
	if (rc == -EPIPE && replace_keeper() == 0)
		rc = exchange(req, rep, fd);
	/* Without its second holder an allocation would die with the keeper: one whose copy
	 * cannot be made goes back. */
	if (rc == 0 && fd && *fd >= 0 && req->op == TFS_KEEPER_ALLOC &&
	    (rc = tfs_handover_note(rep, *fd)))
		give_back_lost(rep->id);
	else if (rc == 0 && fd && *fd >= 0 && req->op == TFS_KEEPER_LIST &&
		 tfs_handover_note(rep, *fd) == -EMFILE)
		tfs_log(LOG_ERR, "keeper: no descriptor left (RLIMIT_NOFILE) for a second one of "
			"allocation %llu: it goes if the keeper dies", (unsigned long long)rep->id);
	if (req->op == TFS_KEEPER_FREE)
		tfs_handover_forget(req->id);
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
	if (op == TFS_KEEPER_BYE)
		kc.bye = 1;
	if (kc.fd >= 0 && send(kc.fd, &req, sizeof(req), MSG_NOSIGNAL) < 0)
		tfs_log(LOG_WARNING, "cannot reach the memory keeper: %s", strerror(errno));
	pthread_mutex_unlock(&kc.mu);
}

void tfs_keeper_tell_redis(int pidfd)
{
	struct tfs_keeper_req req = { .op = TFS_KEEPER_REDIS };
	int rc;

	if (pidfd < 0)
		return;
	pthread_mutex_lock(&kc.mu);
	if (kc.fd >= 0 && (rc = tfs_send_fd(kc.fd, &req, sizeof(req), pidfd, 0)))
		tfs_log(LOG_WARNING, "cannot reach the memory keeper: %s", strerror(-rc));
	pthread_mutex_unlock(&kc.mu);
}
