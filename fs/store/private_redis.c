/* The private redis-server started when no --redis URL is given: a unix socket in a
 * runtime directory of its own, no TCP port, stopped at unmount. It keeps an append-only
 * file there, and a thread of the daemon restarts it when it dies, so that the records
 * survive it: a daemon whose Redis vanished would answer EIO until remounted. The daemon
 * follows it through a pidfd, so that a pid reused by another process is never signalled.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mem/keeper/keeper.h"
#include "store/private_redis.h"
#include "log.h"
#include "store/conn.h"

/* Restarts allowed in RESTART_WINDOW seconds before the supervisor gives up. */
#define RESTART_MAX 5
#define RESTART_WINDOW 60

static struct {
	char prog[4200], sock[300], logf[300], pidf[300];
	char password[256];          /* "" for none */
	int pidfd;                   /* -1: none */
	pthread_t thread;
	int running;
	int pipe[2];                 /* wakes the supervisor to stop */
	pthread_mutex_t mu;          /* pid and pidfd against the supervisor */
} sp = { .pidfd = -1, .pipe = { -1, -1 }, .mu = PTHREAD_MUTEX_INITIALIZER };

static int find_in_path(const char *prog, char *out, size_t size)
{
	const char *path = getenv("PATH");
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s", path ? path : "/usr/local/bin:/usr/bin:/usr/sbin");
	for (char *dir = strtok(buf, ":"); dir; dir = strtok(NULL, ":")) {
		snprintf(out, size, "%s/%s", dir, prog);
		if (access(out, X_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

static int make_rundir(void)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	const char *bases[] = { geteuid() == 0 ? "/run" : xdg, "/tmp" };

	for (size_t i = 0; i < 2; i++) {
		if (!bases[i])
			continue;
		snprintf(tfs_redis.rundir, sizeof(tfs_redis.rundir), "%s/tensorfs.XXXXXX", bases[i]);
		if (mkdtemp(tfs_redis.rundir))
			return 0;
	}
	tfs_redis.rundir[0] = '\0';
	return -errno;
}

/* In the child about to run redis-server: its password as configuration on standard input
 * (redis-server - reads it from there), quoted as redis.conf reads quoted strings. 0, or
 * -1 when stdin stays /dev/null. */
static int password_on_stdin(void)
{
	char conf[1100], *d = conf;
	int p[2];
	ssize_t n;

	d += sprintf(d, "requirepass \"");
	for (const unsigned char *c = (const unsigned char *)sp.password; *c; c++)
		d += *c < 0x20 || *c >= 0x7f || *c == '"' || *c == '\\' ?
			sprintf(d, "\\x%02x", *c) : sprintf(d, "%c", *c);
	d += sprintf(d, "\"\n");
	if (pipe(p))
		return -1;
	n = write(p[1], conf, (size_t)(d - conf));
	explicit_bzero(conf, sizeof(conf));
	close(p[1]);
	if (n != d - conf || dup2(p[0], 0) < 0) {
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return 0;
}

/* Starts redis-server; 0 with tfs_redis.pid and sp.pidfd set, or a negative errno. */
static int start_server(void)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		const char *opts[] = { "--port", "0", "--unixsocket", sp.sock, "--unixsocketperm",
			"700", "--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
			"--dir", tfs_redis.rundir, "--logfile", sp.logf, "--pidfile", sp.pidf,
			"--daemonize", "no" };
		const char *av[sizeof(opts) / sizeof(opts[0]) + 3];
		int null = open("/dev/null", O_RDWR), n = 0;

		/* Its own session: the terminal's signals and our fork into the background
		 * must not stop it; the daemon stops it at unmount. */
		setsid();
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		av[n++] = sp.prog;
		if (sp.password[0]) {
			if (password_on_stdin())
				_exit(126);
			av[n++] = "-";
		}
		for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
			av[n++] = opts[i];
		av[n] = NULL;
		execv(sp.prog, (char **)av);
		_exit(127);
	}
	pthread_mutex_lock(&sp.mu);
	tfs_redis.pid = pid;
	sp.pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	pthread_mutex_unlock(&sp.mu);
	return 0;
}

/* Waits until the server at url answers (up to 5 s): 0, -EIO (it exited) or -ETIMEDOUT. */
static int wait_ready(const char *url)
{
	struct tfs_redis_url u;
	redisContext *c;
	char err[256];
	int rc;

	tfs_url_parse(url, &u, NULL, 0);
	snprintf(u.password, sizeof(u.password), "%s", sp.password);
	for (int i = 0; i < 100; i++) {
		int status;
		if (waitpid(tfs_redis.pid, &status, WNOHANG) == tfs_redis.pid)
			return -EIO;
		c = tfs_redis_connect(&u, 500, &rc, err, sizeof(err));
		if (c) {
			redisFree(c);
			return 0;
		}
		usleep(50000);
	}
	return -ETIMEDOUT;
}

/* The append-only files: Redis 7 keeps a directory of them, older ones one file. */
static void remove_aof(const char *dir)
{
	char path[600];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/appendonly.aof", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/appendonlydir", dir);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		char f[900];

		if (e->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "%s/%s", path, e->d_name);
		unlink(f);
	}
	closedir(d);
	rmdir(path);
}

/* A daemon started again by its keeper finds the server of the run before it still
 * running in the runtime directory the keeper names (TFS_RUNDIR): 0 when it answers and
 * is followed from now on, else -ENOENT (a new one is started there, from its
 * append-only file). */
static int reuse_server(const char *url)
{
	struct tfs_redis_url u;
	redisContext *c;
	char err[256];
	FILE *f;
	int rc, pid = 0;

	f = fopen(sp.pidf, "r");
	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	if (pid <= 0 || tfs_url_parse(url, &u, NULL, 0))
		return -ENOENT;
	snprintf(u.password, sizeof(u.password), "%s", sp.password);
	c = tfs_redis_connect(&u, 500, &rc, err, sizeof(err));
	if (!c)
		return -ENOENT;
	redisFree(c);
	pthread_mutex_lock(&sp.mu);
	tfs_redis.pid = pid;
	sp.pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	pthread_mutex_unlock(&sp.mu);
	tfs_log(LOG_INFO, "private redis-server (pid %d) of the run before at %s", pid, sp.sock);
	return 0;
}

int tfs_spawn_redis(char *url, size_t urlsize, const char *password)
{
	const char *keep = getenv("TFS_RUNDIR");
	int rc;

	snprintf(sp.password, sizeof(sp.password), "%s", password);
	if (find_in_path("redis-server", sp.prog, sizeof(sp.prog))) {
		tfs_log(LOG_ERR, "redis-server not found: install the Debian package 'redis-server' "
			"(apt-get install redis-server), or give --redis URL");
		return -ENOENT;
	}
	if (keep && keep[0] && strlen(keep) < sizeof(tfs_redis.rundir) - 16 && access(keep, W_OK) == 0) {
		snprintf(tfs_redis.rundir, sizeof(tfs_redis.rundir), "%s", keep);
	} else if ((rc = make_rundir())) {
		tfs_log(LOG_ERR, "cannot make a runtime directory for Redis: %s", strerror(-rc));
		return rc;
	}
	unsetenv("TFS_RUNDIR");
	snprintf(sp.sock, sizeof(sp.sock), "%s/redis.sock", tfs_redis.rundir);
	snprintf(sp.logf, sizeof(sp.logf), "%s/redis.log", tfs_redis.rundir);
	snprintf(sp.pidf, sizeof(sp.pidf), "%s/redis.pid", tfs_redis.rundir);
	snprintf(url, urlsize, "unix://%s", sp.sock);
	if (keep && reuse_server(url) == 0)
		return 0;
	if ((rc = start_server()))
		return rc;
	rc = wait_ready(url);
	if (rc == -EIO) {
		tfs_redis.pid = 0;
		tfs_log(LOG_ERR, "redis-server exited at start (see %s)", sp.logf);
		return rc;
	}
	if (rc) {
		tfs_log(LOG_ERR, "redis-server did not answer within 5 s (see %s)", sp.logf);
		tfs_stop_redis();
		return rc;
	}
	tfs_log(LOG_INFO, "private redis-server (pid %d) at %s", (int)tfs_redis.pid, sp.sock);
	return 0;
}

static void *supervise(void *arg)
{
	time_t starts[RESTART_MAX] = { 0 };
	int nstarts = 0;
	char url[400];

	(void)arg;
	snprintf(url, sizeof(url), "unix://%s", sp.sock);
	for (;;) {
		struct pollfd p[2] = { { .fd = sp.pidfd, .events = POLLIN },
				       { .fd = sp.pipe[0], .events = POLLIN } };
		time_t now;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;                /* stopping */
		if (!p[0].revents)
			continue;
		pthread_mutex_lock(&sp.mu);
		waitpid(tfs_redis.pid, NULL, WNOHANG);
		close(sp.pidfd);
		sp.pidfd = -1;
		tfs_redis.pid = 0;
		pthread_mutex_unlock(&sp.mu);
		now = time(NULL);
		if (nstarts == RESTART_MAX && now - starts[0] < RESTART_WINDOW) {
			tfs_log(LOG_ERR, "private redis-server died %d times in %d s: not restarting "
				"it (see %s); metadata operations fail until remount", RESTART_MAX,
				RESTART_WINDOW, sp.logf);
			break;
		}
		if (nstarts == RESTART_MAX) {
			memmove(starts, starts + 1, sizeof(starts[0]) * (RESTART_MAX - 1));
			nstarts--;
		}
		starts[nstarts++] = now;
		tfs_log(LOG_ERR, "private redis-server died: restarting it from its append-only "
			"file (see %s)", sp.logf);
		if (start_server() || sp.pidfd < 0 || wait_ready(url)) {
			tfs_log(LOG_ERR, "private redis-server did not come back (see %s)", sp.logf);
			if (sp.pidfd < 0)
				break;
			continue;
		}
		tfs_log(LOG_NOTICE, "private redis-server back (pid %d)", (int)tfs_redis.pid);
		tfs_keeper_tell_redis(sp.pidfd);
	}
	return NULL;
}

int tfs_spawn_supervise(void)
{
	int e;

	/* The keeper stops it when it ends on a stop this daemon does not carry out. */
	tfs_keeper_tell_redis(sp.pidfd);
	if (sp.pidfd < 0)
		return 0;             /* --redis given, or no pidfd (old kernel): not supervised */
	if (pipe2(sp.pipe, O_CLOEXEC))
		return -errno;
	e = pthread_create(&sp.thread, NULL, supervise, NULL);
	if (e) {
		close(sp.pipe[0]);
		close(sp.pipe[1]);
		sp.pipe[0] = sp.pipe[1] = -1;
		return -e;
	}
	pthread_setname_np(sp.thread, "tfs-redis");
	sp.running = 1;
	return 0;
}

void tfs_stop_redis(void)
{
	char path[300];

	if (sp.running) {
		if (write(sp.pipe[1], "x", 1) < 0)
			tfs_log(LOG_WARNING, "cannot stop the Redis supervisor: %s", strerror(errno));
		pthread_join(sp.thread, NULL);
		close(sp.pipe[0]);
		close(sp.pipe[1]);
		sp.pipe[0] = sp.pipe[1] = -1;
		sp.running = 0;
	}
	if (tfs_redis.pid > 0) {
		/* Through the pidfd: the pid may belong to another process by now. */
		if (sp.pidfd >= 0)
			syscall(SYS_pidfd_send_signal, sp.pidfd, SIGTERM, NULL, 0);
		else
			kill(tfs_redis.pid, SIGTERM);
		for (int i = 0; i < 100; i++) {
			struct pollfd p = { .fd = sp.pidfd, .events = POLLIN };

			waitpid(tfs_redis.pid, NULL, WNOHANG);
			if (sp.pidfd >= 0 ? poll(&p, 1, 50) > 0 :
			    (kill(tfs_redis.pid, 0) && errno == ESRCH))
				break;
			if (sp.pidfd < 0)
				usleep(50000);
		}
		waitpid(tfs_redis.pid, NULL, WNOHANG);
		tfs_redis.pid = 0;
	}
	if (sp.pidfd >= 0) {
		close(sp.pidfd);
		sp.pidfd = -1;
	}
	if (tfs_redis.rundir[0]) {
		snprintf(path, sizeof(path), "%s/redis.sock", tfs_redis.rundir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/redis.log", tfs_redis.rundir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/redis.pid", tfs_redis.rundir);
		unlink(path);
		remove_aof(tfs_redis.rundir);
		rmdir(tfs_redis.rundir);
		tfs_redis.rundir[0] = '\0';
	}
}
