/* Both ends of a keeper's handover (handover.h): the daemon's registry of descriptors and
 * the start of a new keeper, and the new keeper's reception of what it is handed. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mem/keeper/handover.h"
#include "fd_pass.h"
#include "log.h"
#include "strutil.h"

extern char **environ;

/* The most allocations a new keeper accepts: bounds what a confused peer can make it keep. */
#define HANDOVER_ITEMS_MAX (UINT64_C(1) << 24)

struct hrec {
	uint64_t id, size;
	int32_t device;
	int fd;
	uint8_t handle[TFS_IPC_HANDLE_SIZE];
};

static struct {
	pthread_mutex_t mu;
	int enabled;
	const struct tfs_keeper_conf *conf;
	struct hrec *r;         /* sorted by id */
	size_t n, cap;
} ho = { .mu = PTHREAD_MUTEX_INITIALIZER };

void tfs_keeper_set_conf(const struct tfs_keeper_conf *conf)
{
	ho.conf = conf;
}

int tfs_handover_enable(void)
{
	/* A cuda daemon's host tier (docs/tiers.md) has host objects, but its keeper's
	 * memory is the cuda one, which dies with it: no handover. The registry doubles the
	 * daemon's descriptors of memory: main() raised the soft limit (util/nofile.h). */
	if (!ho.conf || !ho.conf->mem->adopt)
		return -ENOTSUP;
	__atomic_store_n(&ho.enabled, 1, __ATOMIC_RELEASE);
	return 0;
}

int tfs_handover_enabled(void)
{
	return __atomic_load_n(&ho.enabled, __ATOMIC_ACQUIRE) && ho.conf;
}

/* The index of id, or where it would go. Called with ho.mu. */
static size_t find(uint64_t id)
{
	size_t lo = 0, hi = ho.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ho.r[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int tfs_handover_note(const struct tfs_keeper_rep *rep, int fd)
{
	struct hrec *r;
	size_t at;
	int copy, rc = 0;

	if (fd < 0 || !__atomic_load_n(&ho.enabled, __ATOMIC_ACQUIRE))
		return 0;
	copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (copy < 0) {
		rc = -errno;
		/* Out of descriptors: the allocation's ALLOC fails, and the backend says why. */
		if (rc != -EMFILE && rc != -ENFILE)
			tfs_log(LOG_ERR, "keeper: cannot keep a second descriptor of allocation "
				"%llu: %s", (unsigned long long)rep->id, strerror(-rc));
		return rc;
	}
	pthread_mutex_lock(&ho.mu);
	at = find(rep->id);
	if (at < ho.n && ho.r[at].id == rep->id) {
		close(ho.r[at].fd);
		ho.r[at].fd = copy;
		goto out;
	}
	if (ho.n == ho.cap) {
		size_t cap = ho.cap ? ho.cap * 2 : 256;
		struct hrec *nr = realloc(ho.r, cap * sizeof(*nr));

		if (!nr) {
			tfs_log(LOG_ERR, "keeper: no memory to keep allocation %llu's descriptor",
				(unsigned long long)rep->id);
			close(copy);
			rc = -ENOMEM;
			goto out;
		}
		ho.r = nr;
		ho.cap = cap;
	}
	memmove(&ho.r[at + 1], &ho.r[at], (ho.n - at) * sizeof(*r));
	r = &ho.r[at];
	r->id = rep->id;
	r->size = rep->size;
	r->device = rep->device;
	r->fd = copy;
	memcpy(r->handle, rep->handle, sizeof(r->handle));
	ho.n++;
out:
	pthread_mutex_unlock(&ho.mu);
	return rc;
}

void tfs_handover_forget(uint64_t id)
{
	size_t at;

	pthread_mutex_lock(&ho.mu);
	at = find(id);
	if (at < ho.n && ho.r[at].id == id) {
		close(ho.r[at].fd);
		memmove(&ho.r[at], &ho.r[at + 1], (ho.n - at - 1) * sizeof(ho.r[0]));
		ho.n--;
	}
	pthread_mutex_unlock(&ho.mu);
}

static int set_timeouts(int fd, int seconds)
{
	struct timeval tv = { .tv_sec = seconds };

	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -errno;
	return 0;
}

/* The daemon's environment for the new keeper: ours without the names of the keeper's
 * own (a daemon's end of a keeper socket), with TFS_HANDOVER_ENV=sock. NULL without
 * memory; the strings but the last are environ's. */
static char **keeper_env(int sock, char *own, size_t own_size)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], TFS_HANDOVER_ENV "=", sizeof(TFS_HANDOVER_ENV)) &&
		    strncmp(environ[i], "TFS_KEEPER_", 11))
			env[k++] = environ[i];
	snprintf(own, own_size, TFS_HANDOVER_ENV "=%d", sock);
	env[k] = own;
	return env;
}

/* Forks twice and runs the program again in the grandchild with the keeper's end of the
 * pair, so that the new keeper is nobody's child to reap. Only async-signal-safe calls
 * after fork: the daemon has threads (and may have CUDA). 0 or -errno. */
static int exec_keeper(int theirs)
{
	char own[64], **env = keeper_env(theirs, own, sizeof(own));
	char *const *argv = ho.conf->argv;
	sigset_t none;
	pid_t c;
	int st;

	if (!env)
		return -ENOMEM;
	sigemptyset(&none);
	c = fork();
	if (c < 0) {
		free(env);
		return -errno;
	}
	if (c == 0) {
		pid_t g = fork();

		if (g != 0)
			_exit(g < 0 ? 1 : 0);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (fcntl(theirs, F_SETFD, 0) == 0)
			execve("/proc/self/exe", argv, env);
		_exit(127);
	}
	free(env);
	while (waitpid(c, &st, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/* The conf message for the keeper: what this daemon's keeper was started with. */
static int fill_conf(struct tfs_handover_conf *hc)
{
	const struct tfs_keeper_conf *c = ho.conf;
	const char *secret = c->secret ? c->secret : "";

	memset(hc, 0, sizeof(*hc));
	hc->magic = TFS_HANDOVER_MAGIC;
	hc->flags = (c->syslog ? TFS_HANDOVER_LOG_SYSLOG : 0) |
		    (c->detach_stdio ? TFS_HANDOVER_DETACH_STDIO : 0) |
		    (c->stderr_is_log ? TFS_HANDOVER_STDERR_IS_LOG : 0);
	hc->delay_max_ms = c->delay_max_ms;
	hc->daemon = (int32_t)getpid();
	if ((size_t)snprintf(hc->mem, sizeof(hc->mem), "%s", c->mem->name) >= sizeof(hc->mem) ||
	    (size_t)snprintf(hc->mountpoint, sizeof(hc->mountpoint), "%s",
			     c->mountpoint ? c->mountpoint : "") >= sizeof(hc->mountpoint) ||
	    (size_t)snprintf(hc->rundir, sizeof(hc->rundir), "%s",
			     c->rundir ? c->rundir : "") >= sizeof(hc->rundir) ||
	    (size_t)snprintf(hc->lease, sizeof(hc->lease), "%s",
			     c->lease ? c->lease : "") >= sizeof(hc->lease) ||
	    strlen(secret) >= sizeof(hc->secret))
		return -ENAMETOOLONG;
	memcpy(hc->secret, secret, strlen(secret));
	return 0;
}

/* Sends the registry, then the end. Called with ho.mu. 0 or -errno. */
static int send_items(int sock)
{
	struct tfs_handover_item it;
	int rc;

	for (size_t i = 0; i < ho.n; i++) {
		memset(&it, 0, sizeof(it));
		it.op = TFS_HANDOVER_ITEM;
		it.device = ho.r[i].device;
		it.id = ho.r[i].id;
		it.size = ho.r[i].size;
		memcpy(it.handle, ho.r[i].handle, sizeof(it.handle));
		if ((rc = tfs_send_fd(sock, &it, sizeof(it), ho.r[i].fd, 0)))
			return rc;
	}
	memset(&it, 0, sizeof(it));
	it.op = TFS_HANDOVER_END;
	return tfs_send_fd(sock, &it, sizeof(it), -1, 0);
}

int tfs_handover_spawn(int *sock, pid_t *pid)
{
	struct tfs_handover_conf *hc;
	struct tfs_keeper_rep rep;
	size_t n;
	ssize_t got;
	int sv[2], rc;

	if (!tfs_handover_enabled())
		return -ENOTSUP;
	hc = malloc(sizeof(*hc));
	if (!hc)
		return -ENOMEM;
	if ((rc = fill_conf(hc)))
		goto out_conf;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		rc = -errno;
		goto out_conf;
	}
	if ((rc = set_timeouts(sv[0], TFS_HANDOVER_TIMEOUT_S)) || (rc = exec_keeper(sv[1]))) {
		close(sv[1]);
		goto out_sock;
	}
	close(sv[1]);
	rc = tfs_send_fd(sv[0], hc, sizeof(*hc), -1, 0);
	explicit_bzero(hc->secret, sizeof(hc->secret));
	if (rc)
		goto out_sock;
	pthread_mutex_lock(&ho.mu);
	rc = send_items(sv[0]);
	n = ho.n;
	pthread_mutex_unlock(&ho.mu);
	if (rc)
		goto out_sock;
	do
		got = recv(sv[0], &rep, sizeof(rep), 0);
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)sizeof(rep) || rep.rc || rep.id == 0 || rep.id > 0x7fffffff) {
		rc = got != (ssize_t)sizeof(rep) ? (got < 0 ? -errno : -EPIPE) :
		     rep.rc ? rep.rc : -EBADMSG;
		goto out_sock;
	}
	if ((rc = set_timeouts(sv[0], 0)))
		goto out_sock;
	tfs_log(LOG_NOTICE, "keeper: a new memory keeper (pid %llu) took %zu allocation(s) over",
		(unsigned long long)rep.id, n);
	*sock = sv[0];
	*pid = (pid_t)rep.id;
	free(hc);
	return 0;
out_sock:
	/* The new keeper, if it runs, sees the end of its socket and exits. */
	close(sv[0]);
out_conf:
	free(hc);
	return rc;
}

/* --- the new keeper's side --- */

/* One message of exactly len bytes and the descriptor sent with it (*fd, else -1).
 * 0; -EPIPE at the end or on a message of another size; -EMFILE when its descriptor came
 * but could not be taken (this keeper's RLIMIT_NOFILE); or -errno. */
static int recv_exact(int sock, void *msg, size_t len, int *fd)
{
	ssize_t n = tfs_recv_fd(sock, msg, len, 0, fd);

	if (*fd == TFS_FD_LOST) {
		*fd = -1;
		return -EMFILE;
	}
	if (n == (ssize_t)len)
		return 0;
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return n < 0 && n != -EMSGSIZE ? (int)n : -EPIPE;
}

static const struct tfs_keeper_mem *mem_named(const struct tfs_keeper_mem *const *mems,
					     const char *name)
{
	for (; *mems; mems++)
		if (strcmp((*mems)->name, name) == 0)
			return *mems;
	return NULL;
}

int tfs_handover_keeper_main(char **argv, const struct tfs_keeper_mem *const *mems)
{
	static struct tfs_handover_conf hc;
	static struct tfs_keeper_conf conf;
	const char *s = getenv(TFS_HANDOVER_ENV);
	struct tfs_handover_item *items = NULL;
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	size_t n = 0, cap = 0;
	int *fds = NULL, sock, fd;
	uint64_t v;

	if (!s)
		return 0;
	if (tfs_parse_u64(s, strlen(s), &v) || v < 3 || v > 65535) {
		fprintf(stderr, "tensorfs: %s is not a descriptor\n", TFS_HANDOVER_ENV);
		_exit(1);
	}
	sock = (int)v;
	unsetenv(TFS_HANDOVER_ENV);
	fcntl(sock, F_SETFD, FD_CLOEXEC);
	tfs_keeper_close_inherited(sock);
	prctl(PR_SET_NAME, "tensorfs-keeper");
	/* The daemon made the pair: its credentials name it, whatever the message says. */
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &cl) || set_timeouts(sock,
	    TFS_HANDOVER_TIMEOUT_S) || recv_exact(sock, &hc, sizeof(hc), &fd) || fd >= 0 ||
	    hc.magic != TFS_HANDOVER_MAGIC || hc.daemon != cred.pid ||
	    !memchr(hc.mem, 0, sizeof(hc.mem)) || !memchr(hc.mountpoint, 0, sizeof(hc.mountpoint)) ||
	    !memchr(hc.rundir, 0, sizeof(hc.rundir)) || !memchr(hc.lease, 0, sizeof(hc.lease)) ||
	    !memchr(hc.secret, 0, sizeof(hc.secret))) {
		if (fd >= 0)
			close(fd);
		tfs_log(LOG_ERR, "keeper: the handover's first message is not the daemon's");
		_exit(1);
	}
	if (hc.flags & TFS_HANDOVER_LOG_SYSLOG)
		tfs_log_to_syslog("tensorfs");
	conf.mem = mem_named(mems, hc.mem);
	if (!conf.mem || !conf.mem->adopt) {
		tfs_log(LOG_ERR, "keeper: memory '%s' cannot be handed over", hc.mem);
		_exit(1);
	}
	conf.argv = argv;
	conf.mountpoint = hc.mountpoint[0] ? hc.mountpoint : NULL;
	conf.rundir = hc.rundir;
	conf.close_fd = conf.notify_fd = -1;
	conf.delay_max_ms = hc.delay_max_ms < KEEPER_BACKOFF_MIN_MS ? KEEPER_BACKOFF_MIN_MS :
			    hc.delay_max_ms;
	conf.detach_stdio = !!(hc.flags & TFS_HANDOVER_DETACH_STDIO);
	conf.stderr_is_log = !!(hc.flags & TFS_HANDOVER_STDERR_IS_LOG);
	conf.syslog = !!(hc.flags & TFS_HANDOVER_LOG_SYSLOG);
	conf.lease = hc.lease;
	conf.secret = hc.secret;
	for (;;) {
		struct tfs_handover_item it;
		int rc = recv_exact(sock, &it, sizeof(it), &fd);

		if (rc) {
			tfs_log(LOG_ERR, "keeper: the handover broke off: %s", strerror(-rc));
			_exit(1);
		}
		if (it.op == TFS_HANDOVER_END && fd < 0)
			break;
		if (it.op != TFS_HANDOVER_ITEM || fd < 0 || n == HANDOVER_ITEMS_MAX) {
			tfs_log(LOG_ERR, "keeper: the handover sent an item it should not have");
			_exit(1);
		}
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct tfs_handover_item *ni = realloc(items, nc * sizeof(*ni));
			int *nf = ni ? realloc(fds, nc * sizeof(*nf)) : NULL;

			if (ni)
				items = ni;
			if (!ni || !nf) {
				tfs_log(LOG_ERR, "keeper: no memory for the handover");
				_exit(1);
			}
			fds = nf;
			cap = nc;
		}
		items[n] = it;
		fds[n++] = fd;
	}
	set_timeouts(sock, 0);
	tfs_keeper_resume(&conf, sock, cred.pid, items, fds, n);
}
