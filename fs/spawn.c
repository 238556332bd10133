/* The private redis-server started when no --redis URL is given: a unix socket in a
 * runtime directory of its own, no TCP port, no persistence, stopped at unmount. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "spawn.h"
#include "log.h"

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
		snprintf(tfs_d.rundir, sizeof(tfs_d.rundir), "%s/tensorfs.XXXXXX", bases[i]);
		if (mkdtemp(tfs_d.rundir))
			return 0;
	}
	tfs_d.rundir[0] = '\0';
	return -errno;
}

int tfs_spawn_redis(char *url, size_t urlsize)
{
	char prog[4200], sock[300], logf[300];
	struct tfs_redis_url u;
	redisContext *c;
	char err[256];
	pid_t pid;
	int rc;

	if (find_in_path("redis-server", prog, sizeof(prog))) {
		tfs_log(LOG_ERR, "redis-server not found: install the Debian package 'redis-server' "
			"(apt-get install redis-server), or give --redis URL");
		return -ENOENT;
	}
	if ((rc = make_rundir())) {
		tfs_log(LOG_ERR, "cannot make a runtime directory for Redis: %s", strerror(-rc));
		return rc;
	}
	snprintf(sock, sizeof(sock), "%s/redis.sock", tfs_d.rundir);
	snprintf(logf, sizeof(logf), "%s/redis.log", tfs_d.rundir);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		/* Its own session: the terminal's signals and our fork into the background
		 * must not stop it; the daemon stops it at unmount. */
		setsid();
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		execl(prog, prog, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
		      "--save", "", "--appendonly", "no", "--dir", tfs_d.rundir,
		      "--logfile", logf, "--daemonize", "no", (char *)NULL);
		_exit(127);
	}
	tfs_d.redis_pid = pid;
	snprintf(url, urlsize, "unix://%s", sock);
	tfs_url_parse(url, &u, NULL, 0);
	for (int i = 0; i < 100; i++) {         /* up to 5 s */
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			tfs_d.redis_pid = 0;
			tfs_log(LOG_ERR, "redis-server exited at start (see %s)", logf);
			return -EIO;
		}
		c = tfs_redis_connect(&u, 500, &rc, err, sizeof(err));
		if (c) {
			redisFree(c);
			tfs_log(LOG_INFO, "private redis-server (pid %d) at %s", (int)pid, sock);
			return 0;
		}
		usleep(50000);
	}
	tfs_log(LOG_ERR, "redis-server did not answer within 5 s (see %s)", logf);
	tfs_stop_redis();
	return -ETIMEDOUT;
}

void tfs_stop_redis(void)
{
	char path[300];

	if (tfs_d.redis_pid > 0) {
		kill(tfs_d.redis_pid, SIGTERM);
		/* After our fork into the background it is no longer our child: poll. */
		for (int i = 0; i < 100; i++) {
			waitpid(tfs_d.redis_pid, NULL, WNOHANG);
			if (kill(tfs_d.redis_pid, 0) && errno == ESRCH)
				break;
			usleep(50000);
		}
		tfs_d.redis_pid = 0;
	}
	if (tfs_d.rundir[0]) {
		snprintf(path, sizeof(path), "%s/redis.sock", tfs_d.rundir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/redis.log", tfs_d.rundir);
		unlink(path);
		rmdir(tfs_d.rundir);
		tfs_d.rundir[0] = '\0';
	}
}
