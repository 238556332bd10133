/* The memory keeper process (keeper.h): a loop over one socket and a signalfd, with a
 * timeout while a restart waits out its back-off. It does nothing that could fail on the
 * daemon's input beyond refusing it: every request is checked, every allocation is the
 * keeper's own record, and a daemon that vanishes only closes the socket. It stays
 * single-threaded, so that CUDA state and the inventory need no lock.
 *
 * Memory leaves the inventory in two places only: do_free (the daemon's FREE) and
 * free_all, which runs only in end_keeper, on an explicit stop (keeper.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mem/keeper/handover.h"
#include "mem/keeper/keeper.h"
#include "fd_pass.h"
#include "log.h"
#include "secret.h"

/* What one allocation can be at most: bounds a hostile size before it reaches a driver. */
#define KEEPER_SIZE_MAX (UINT64_C(1) << 46)

struct kalloc {
	uint64_t id, size;
	int device;
	uint8_t handle[TFS_IPC_HANDLE_SIZE];
	void *priv;
};

static struct {
	const struct tfs_keeper_conf *conf;
	struct kalloc *a;       /* sorted by id: ids only grow, new ones go last */
	size_t n, cap;
	uint64_t next_id;
	pid_t daemon;           /* 0 when none runs */
	int sock;               /* to the running daemon, -1 when none */
	int ready, bye, stopping;
	int served;             /* some daemon said READY: the memory may be named in Redis */
	struct timespec ready_at;       /* when the running daemon said READY */
	unsigned fails;         /* deaths since a daemon last served KEEPER_BACKOFF_RESET s */
	int pending;            /* no daemon runs: one starts at restart_at */
	struct timespec restart_at;
	int redis_pidfd;        /* the private redis-server (REDIS), -1 when none is known */
	int daemon_pidfd;       /* a daemon that is not our child (handover.h), else -1 */
} k = { .sock = -1, .next_id = 1, .redis_pidfd = -1, .daemon_pidfd = -1 };

static struct kalloc *find(uint64_t id, size_t *at)
{
	size_t lo = 0, hi = k.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k.a[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (at)
		*at = lo;
	return lo < k.n && k.a[lo].id == id ? &k.a[lo] : NULL;
}

/* What a reply says of an allocation. */
static void describe(const struct kalloc *a, struct tfs_keeper_rep *rep)
{
	rep->id = a->id;
	rep->size = a->size;
	rep->device = a->device;
	memcpy(rep->handle, a->handle, sizeof(rep->handle));
}

/* The host tier's memory (device TFS_DEVICE_CPU) is the host backend's shared-memory
 * objects whatever the mount's backend (docs/tiers.md). */
static const struct tfs_keeper_mem *mem_of(int device)
{
	return device == TFS_DEVICE_CPU ? &tfs_keeper_mem_host : k.conf->mem;
}

static int do_alloc(const struct tfs_keeper_req *req, struct tfs_keeper_rep *rep, int *fd)
{
	const struct tfs_keeper_mem *mem = mem_of(req->device);
	struct kalloc *a;
	int rc;

	if (req->size == 0 || req->size > KEEPER_SIZE_MAX ||
	    (req->device < 0 && req->device != TFS_DEVICE_CPU))
		return -EINVAL;
	if (k.n == k.cap) {
		size_t cap = k.cap ? k.cap * 2 : 256;
		struct kalloc *na = realloc(k.a, cap * sizeof(*na));

		if (!na)
			return -ENOMEM;
		k.a = na;
		k.cap = cap;
	}
	if (req->dst_id) {
		struct kalloc *head = find(req->dst_id, NULL);

		if (!head || head->device != req->device || req->device < 0)
			return head ? -EINVAL : -ENOENT;
	}
	a = &k.a[k.n];
	memset(a, 0, sizeof(*a));
	rc = mem->alloc(req->size, req->device, req->uid, req->gid, req->mode, a->handle, fd,
			&a->priv);
	if (rc)
		return rc;
	if (req->dst_id) {
		static const uint8_t zero[TFS_IPC_HANDLE_SIZE - TFS_KEEPER_LINK_AT];

		if (memcmp(a->handle + TFS_KEEPER_LINK_AT, zero, sizeof(zero))) {
			mem->free(a->priv, req->size, req->device);
			if (*fd >= 0)
				close(*fd);
			*fd = -1;
			return -EINVAL;
		}
		tfs_keeper_link_put(a->handle, req->dst_id, req->dst_off);
	}
	a->id = k.next_id++;
	a->size = req->size;
	a->device = req->device;
	k.n++;
	describe(a, rep);
	return 0;
}

static void release(struct kalloc *a)
{
	mem_of(a->device)->free(a->priv, a->size, a->device);
}

static int do_free(const struct tfs_keeper_req *req)
{
	size_t at;
	struct kalloc *a = find(req->id, &at);

	if (!a)
		return -ENOENT;
	release(a);
	memmove(&k.a[at], &k.a[at + 1], (k.n - at - 1) * sizeof(*a));
	k.n--;
	return 0;
}

static int do_list(const struct tfs_keeper_req *req, struct tfs_keeper_rep *rep, int *fd)
{
	size_t at;
	struct kalloc *a;

	find(req->id + 1, &at);
	if (req->id == UINT64_MAX || at >= k.n)
		return -ENOENT;
	a = &k.a[at];
	describe(a, rep);
	*fd = mem_of(a->device)->fd ? mem_of(a->device)->fd(a->priv) : -1;
	return 0;
}

static int do_copy(const struct tfs_keeper_req *req)
{
	struct kalloc *src = find(req->id, NULL), *dst = find(req->dst_id, NULL);
	uint64_t len = req->size;

	if (!k.conf->mem->copy)
		return -ENOTSUP;
	if (!src || !dst)
		return -ENOENT;
	if (src->device == TFS_DEVICE_CPU || dst->device == TFS_DEVICE_CPU)
		return -ENOTSUP;
	if (req->src_off > src->size || len > src->size - req->src_off ||
	    req->dst_off > dst->size || len > dst->size - req->dst_off)
		return -EINVAL;
	if (len == 0)
		return 0;
	return k.conf->mem->copy(dst->priv, req->dst_off, src->priv, req->src_off, len);
}

/* The private redis-server the daemon runs now (REDIS): its pidfd replaces the last one. */
static void set_redis(int pidfd)
{
	if (k.redis_pidfd >= 0)
		close(k.redis_pidfd);
	k.redis_pidfd = pidfd;
}

/* One request from the daemon. -1 when the socket is closed (the daemon is ending). */
static int serve_one(void)
{
	struct tfs_keeper_req req;
	struct tfs_keeper_rep rep;
	int fd = -1, owned = 0, got;
	ssize_t n = tfs_recv_fd(k.sock, &req, sizeof(req), 0, &got);

	if (n == 0 || (n < 0 && n != -EAGAIN && n != -EMSGSIZE))
		return -1;
	if (n == -EAGAIN)
		return 0;
	if (got >= 0 && (n != (ssize_t)sizeof(req) || req.op != TFS_KEEPER_REDIS)) {
		close(got);
		got = -1;
	}
	memset(&rep, 0, sizeof(rep));
	if (n != (ssize_t)sizeof(req)) {
		rep.rc = -EBADMSG;
	} else {
		switch (req.op) {
		case TFS_KEEPER_ALLOC:
			rep.rc = do_alloc(&req, &rep, &fd);
			owned = 1;     /* a fresh descriptor: sent, then ours to close */
			break;
		case TFS_KEEPER_FREE:
			rep.rc = do_free(&req);
			break;
		case TFS_KEEPER_LIST:
			rep.rc = do_list(&req, &rep, &fd);
			break;
		case TFS_KEEPER_COPY:
			rep.rc = do_copy(&req);
			break;
		case TFS_KEEPER_READY:
			k.ready = k.served = 1;
			clock_gettime(CLOCK_MONOTONIC, &k.ready_at);
			return 0;      /* no reply: a notice */
		case TFS_KEEPER_REDIS:
			if (got >= 0)
				set_redis(got);
			return 0;
		case TFS_KEEPER_BYE:
			k.bye = 1;
			return 0;
		default:
			rep.rc = -EBADMSG;
		}
	}
	tfs_send_fd(k.sock, &rep, sizeof(rep), rep.rc == 0 ? fd : -1, 0);
	if (owned && fd >= 0)
		close(fd);
	return 0;
}

static void free_all(void)
{
	if (k.n)
		tfs_log(LOG_INFO, "keeper: freeing %zu allocation(s)", k.n);
	for (size_t i = 0; i < k.n; i++)
		release(&k.a[i]);
	k.n = 0;
}

/* Everything above fd 2 that the keeper inherited is the daemon's (the FUSE device, the
 * Redis connections, pipes): a keeper holding /dev/fuse would keep a dead mount alive. */
void tfs_keeper_close_inherited(int keep)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int dfd = d ? dirfd(d) : -1;

	if (!d)
		return;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] != '.' && fd > 2 && fd != keep && fd != dfd)
			close(fd);
	}
	closedir(d);
}

/* A socketpair and a fork: in the child (returns 0) sv[1] is the daemon's end, named in
 * its environment (TFS_KEEPER_FD, TFS_KEEPER_PID); in the keeper (returns the child's pid)
 * sv[0] is ours. -errno when either fails, nothing left open. */
static pid_t fork_daemon(int sv[2])
{
	char buf[32];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid < 0) {
		pid = -errno;
		close(sv[0]);
		close(sv[1]);
		return pid;
	}
	if (pid == 0) {
		close(sv[0]);
		snprintf(buf, sizeof(buf), "%d", sv[1]);
		setenv("TFS_KEEPER_FD", buf, 1);
		snprintf(buf, sizeof(buf), "%d", (int)getppid());
		setenv("TFS_KEEPER_PID", buf, 1);
		return 0;
	}
	close(sv[1]);
	return pid;
}

/* In the child about to run the daemon again: the Redis password on a pipe whose reading
 * end the daemon inherits (argv holds it no more: main scrubbed it). The pipe's buffer
 * holds it, so nothing waits. */
static void pass_secret(void)
{
	const char *pw = k.conf->secret;
	size_t n = pw ? strlen(pw) : 0;
	char buf[32];
	int p[2];

	if (!n || pipe(p))
		return;
	if (write(p[1], pw, n) == (ssize_t)n) {
		snprintf(buf, sizeof(buf), "%d", p[0]);
		setenv(TFS_PASSWORD_FD_ENV, buf, 1);
	} else {
		close(p[0]);
	}
	close(p[1]);
}

/* Starts a daemon again after a crash: the same program and arguments, with the keeper's
 * socket, the private redis-server's folder, the node lease's token and the Redis
 * password's pipe in the environment. */
static int start_daemon(void)
{
	int sv[2];
	pid_t pid = fork_daemon(sv);

	if (pid < 0)
		return (int)pid;
	if (pid == 0) {
		sigset_t all;

		/* The keeper blocks the signals it reads from its signalfd; a mask survives exec. */
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		fcntl(sv[1], F_SETFD, 0);
		if (k.conf->rundir && k.conf->rundir[0])
			setenv("TFS_RUNDIR", k.conf->rundir, 1);
		if (k.conf->lease && k.conf->lease[0])
			setenv("TFS_LEASE", k.conf->lease, 1);
		pass_secret();
		execv("/proc/self/exe", k.conf->argv);
		_exit(127);
	}
	k.sock = sv[0];
	k.daemon = pid;
	k.ready = k.bye = 0;
	return 0;
}

/* The private redis-server outlives a daemon; when nobody will serve again it goes too.
 * Through the pidfd the daemon sent: the pid in its pid file may be another process's by
 * now. Nothing when the daemon stopped it already (the pidfd's process is gone). */
static void stop_private_redis(void)
{
	if (k.redis_pidfd < 0)
		return;
	if (syscall(SYS_pidfd_send_signal, k.redis_pidfd, SIGTERM, NULL, 0) && errno != ESRCH)
		tfs_log(LOG_WARNING, "keeper: cannot stop the private redis-server: %s",
			strerror(errno));
	set_redis(-1);
}

/* Is the mount on top at mnt a tensorfs one? Only such a mount is detached: after the
 * daemon unmounted, what is left at mnt may be another filesystem. */
static int tensorfs_on(const char *mnt)
{
	char line[8192], point[4200], *sep;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int ours = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*d %*d %*u:%*u %*s %4199s", point) != 1 || strcmp(point, mnt))
			continue;
		sep = strstr(line, " - ");
		ours = sep && strncmp(sep + 3, "fuse.tensorfs ", 14) == 0;
	}
	fclose(f);
	return ours;
}

void tfs_detach_mount(const char *mnt)
{
	pid_t p;

	/* Never through a symlink: whoever may write the mount point's directory could have
	 * put one there, leading to any other mount. */
	if (umount2(mnt, MNT_DETACH | UMOUNT_NOFOLLOW) == 0 || errno != EPERM)
		return;
	p = fork();
	if (p == 0) {
		execlp("fusermount3", "fusermount3", "-u", "-z", mnt, (char *)NULL);
		_exit(127);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
}

/* The keeper ends, on an explicit stop (keeper.h): the daemon unmounted (its tensors are
 * freed and their records deleted already), or the keeper was told to stop (by a signal)
 * and no daemon that could unmount is left. Only here does the keeper free memory no FREE
 * asked for. */
static void end_keeper(int unmounted)
{
	free_all();
	if (!unmounted && k.conf->mountpoint && tensorfs_on(k.conf->mountpoint))
		tfs_detach_mount(k.conf->mountpoint);
	stop_private_redis();
}

static struct timespec ts_after(unsigned ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

/* Milliseconds until t, 0 once it passed; at most INT_MAX. */
static int ms_until(const struct timespec *t)
{
	struct timespec now;
	int64_t ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (int64_t)(t->tv_sec - now.tv_sec) * 1000 +
	     (t->tv_nsec - now.tv_nsec + 999999) / 1000000;
	return ms <= 0 ? 0 : ms > INT_MAX ? INT_MAX : (int)ms;
}

/* The next restart waits this long: nothing after a daemon that served long enough, then
 * KEEPER_BACKOFF_MIN_MS doubling up to the cap. Counts the death. */
static unsigned next_delay(void)
{
	unsigned shift = k.fails ? k.fails - 1 : 0;
	uint64_t ms = k.fails ? (uint64_t)KEEPER_BACKOFF_MIN_MS << (shift > 20 ? 20 : shift) : 0;

	if (k.fails < UINT_MAX)
		k.fails++;
	return ms > k.conf->delay_max_ms ? k.conf->delay_max_ms : (unsigned)ms;
}

static void schedule_restart(unsigned ms)
{
	k.pending = 1;
	k.restart_at = ts_after(ms);
}

/* The back-off ran out: a daemon starts again (or, when it cannot, later). */
static void restart_now(void)
{
	unsigned ms;
	int rc;

	k.pending = 0;
	if ((rc = start_daemon()) == 0)
		return;
	ms = next_delay();
	tfs_log(LOG_ERR, "keeper: cannot start the daemon: %s; trying again in %u ms (the "
		"keeper keeps its %zu allocation(s))", strerror(-rc), ms, k.n);
	schedule_restart(ms);
}

/* The daemon exited with status st (known: 0 for one that is not our child, whose status
 * nobody tells us). Returns -1 to go on (a restart is scheduled) or the keeper's exit
 * code. */
static int daemon_exited(int st, int known)
{
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	struct timespec now;
	char why[96];
	unsigned ms;

	k.daemon = 0;
	if (k.sock >= 0) {
		close(k.sock);
		k.sock = -1;
	}
	if (k.bye || k.stopping) {
		end_keeper(k.bye);
		return code;
	}
	if (!k.served && k.n == 0) {
		/* The first start failed before serving (it told the terminal why) and the
		 * keeper holds nothing: nothing to keep. */
		end_keeper(0);
		return code;
	}
	/* Anything else keeps every block: a record may name it. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (k.ready && now.tv_sec - k.ready_at.tv_sec >= KEEPER_BACKOFF_RESET)
		k.fails = 0;
	ms = next_delay();
	if (!known)
		snprintf(why, sizeof(why), "ended without unmounting");
	else if (WIFSIGNALED(st))
		snprintf(why, sizeof(why), "died of signal %d", WTERMSIG(st));
	else if (k.ready)
		snprintf(why, sizeof(why), "exited %d without unmounting", code);
	else if (code == TFS_EXIT_REDIS)
		snprintf(why, sizeof(why), "exited %d before serving: Redis did not answer", code);
	else
		snprintf(why, sizeof(why), "exited %d before serving", code);
	if (ms)
		tfs_log(LOG_ERR, "keeper: the daemon %s: starting it again in %u ms (the keeper "
			"keeps its %zu allocation(s))", why, ms, k.n);
	else
		tfs_log(LOG_ERR, "keeper: the daemon %s: starting it again (the keeper keeps its "
			"%zu allocation(s))", why, k.n);
	schedule_restart(ms);
	return -1;
}

/* A stop signal (SIGTERM, SIGINT, SIGHUP): passed to the daemon, which unmounts; with no
 * daemon running (a back-off), the keeper stops. Returns -1 to go on or the exit code. */
static int stop_signal(unsigned signo)
{
	k.stopping = 1;
	if (k.daemon > 0) {
		kill(k.daemon, (int)signo);
		return -1;
	}
	tfs_log(LOG_NOTICE, "keeper: stopped by signal %u while no daemon runs: freeing the "
		"tensors", signo);
	k.pending = 0;
	end_keeper(0);
	return 0;
}

/* Reaps the children that ended (the daemon, orphans of it). Returns -1 to go on or the
 * keeper's exit code. */
static int reap(void)
{
	int st, code = -1;
	pid_t pid;

	while (code < 0 && (pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (pid != k.daemon)
			continue;
		/* Requests it sent before it died still count (a BYE). */
		while (k.sock >= 0 && poll(&(struct pollfd){ .fd = k.sock, .events = POLLIN }, 1,
					   0) > 0 && serve_one() == 0)
			;
		code = daemon_exited(st, 1);
	}
	return code;
}

/* The daemon that is not our child ended (its pidfd said so). Returns as reap does. */
static int daemon_gone(void)
{
	while (k.sock >= 0 && poll(&(struct pollfd){ .fd = k.sock, .events = POLLIN }, 1, 0) > 0 &&
	       serve_one() == 0)
		;
	close(k.daemon_pidfd);
	k.daemon_pidfd = -1;
	return daemon_exited(0, 0);
}

static void keeper_main(void)
{
	sigset_t set;
	int sfd, code = -1;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		tfs_log(LOG_ERR, "keeper: signalfd: %s", strerror(errno));
		kill(k.daemon, SIGTERM);
	}
	/* Orphans of the daemon (a private redis-server it restarted) come here to be reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	prctl(PR_SET_NAME, "tensorfs-keeper");
	while (code < 0) {
		struct pollfd p[3] = { { .fd = sfd, .events = POLLIN },
				       { .fd = k.sock, .events = POLLIN },
				       { .fd = k.daemon_pidfd, .events = POLLIN } };
		struct signalfd_siginfo si;

		if (poll(p, 3, k.pending ? ms_until(&k.restart_at) : -1) < 0) {
			/* Ending here would lose the memory: wait and try again. */
			if (errno != EINTR) {
				tfs_log(LOG_ERR, "keeper: poll: %s", strerror(errno));
				nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
			}
			continue;
		}
		if (k.sock >= 0 && p[1].revents && serve_one() < 0) {
			close(k.sock);
			k.sock = -1;
		}
		if (k.daemon_pidfd >= 0 && p[2].revents)
			code = daemon_gone();
		/* Every pending signal before a restart: a stop that came with the daemon's
		 * death must not start another. */
		while (code < 0 && p[0].revents && read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGCHLD)
				code = reap();
			else if (si.ssi_signo != SIGPIPE)
				code = stop_signal(si.ssi_signo);
		}
		if (code < 0 && k.pending && ms_until(&k.restart_at) == 0)
			restart_now();
	}
	_exit(code);
}

void tfs_keeper_resume(const struct tfs_keeper_conf *conf, int sock, pid_t daemon,
		       const struct tfs_handover_item *items, const int *fds, size_t n)
{
	static const int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP };
	struct tfs_keeper_rep rep = { 0 };
	size_t kept = 0;

	/* What the daemon ignored is ignored still after exec: a SIGCHLD ignored would reap
	 * the daemons this keeper starts before it learns how they ended. */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	k.conf = conf;
	k.sock = sock;
	k.daemon = daemon;
	k.served = k.ready = 1;
	clock_gettime(CLOCK_MONOTONIC, &k.ready_at);
	k.a = calloc(n ? n : 1, sizeof(*k.a));
	if (!k.a) {
		rep.rc = -ENOMEM;
		tfs_send_fd(k.sock, &rep, sizeof(rep), -1, 0);
		_exit(1);
	}
	k.cap = n ? n : 1;
	for (size_t i = 0; i < n; i++) {
		struct kalloc *a = &k.a[k.n];
		int rc;

		/* Ids only grow, and the daemon's registry is sorted: a repeated or smaller
		 * id is refused (its descriptor goes). */
		if (k.n && items[i].id <= k.a[k.n - 1].id) {
			close(fds[i]);
			continue;
		}
		memset(a, 0, sizeof(*a));
		if ((items[i].device < 0 && items[i].device != TFS_DEVICE_CPU) ||
		    !mem_of(items[i].device)->adopt) {
			close(fds[i]);
			rc = -EINVAL;
		} else {
			rc = mem_of(items[i].device)->adopt(fds[i], items[i].handle,
							    items[i].size, items[i].device,
							    &a->priv);
		}
		if (rc) {
			tfs_log(LOG_ERR, "keeper: cannot take allocation %llu over: %s",
				(unsigned long long)items[i].id, strerror(-rc));
			continue;
		}
		a->id = items[i].id;
		a->size = items[i].size;
		a->device = items[i].device;
		memcpy(a->handle, items[i].handle, sizeof(a->handle));
		k.n++;
		kept++;
	}
	if (conf->mem->adopt_done)
		conf->mem->adopt_done();
	k.next_id = k.n ? k.a[k.n - 1].id + 1 : 1;
	k.daemon_pidfd = (int)syscall(SYS_pidfd_open, daemon, 0);
	if (conf->detach_stdio) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			if (!conf->stderr_is_log)
				dup2(null, 2);
			close(null);
		}
	}
	rep.id = (uint64_t)getpid();
	tfs_send_fd(k.sock, &rep, sizeof(rep), -1, 0);
	tfs_log(LOG_NOTICE, "keeper: took over %zu allocation(s) of %zu from a keeper that died; "
		"supervising the daemon (pid %d)", kept, n, (int)daemon);
	if (k.daemon_pidfd < 0) {
		/* Gone already (or no pidfd): as if it had just died. */
		tfs_log(LOG_ERR, "keeper: cannot follow the daemon: %s", strerror(errno));
		k.daemon = 0;
		close(k.sock);
		k.sock = -1;
		schedule_restart(0);
	}
	keeper_main();
	_exit(0);               /* not reached */
}

int tfs_keeper_fork(const struct tfs_keeper_conf *conf)
{
	int sv[2];
	pid_t pid = fork_daemon(sv);

	if (pid < 0)
		return (int)pid;
	if (pid == 0) {
		tfs_keeper_from_env();
		return 0;
	}
	/* The keeper: it must not survive as a second holder of the daemon's descriptors. */
	k.conf = conf;
	k.daemon = pid;
	k.sock = sv[0];
	tfs_keeper_close_inherited(sv[0]);
	if (conf->detach_stdio) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			if (!conf->stderr_is_log)
				dup2(null, 2);
			close(null);
		}
	}
	keeper_main();
	return 0;               /* not reached */
}
