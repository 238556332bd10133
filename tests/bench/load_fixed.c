/* The fixed costs of one `tensorctl load` (issue 38, "small loads without fixed costs"),
 * seen from outside the command: the time from its exec to the first tensor whose bytes
 * are in, and to its end (tests/bench/load_fixed.sh runs it).
 *   load_fixed RUNS DEST CMD [ARGS...]
 * Each run removes DEST, then spawns CMD (posix_spawn, so the clock starts at the spawn,
 * not after a fork of this process's pages) and watches with inotify:
 *  - "first": the first IN_CLOSE_WRITE of a file in DEST (a directory of tensors; the
 *    watch is added when DEST appears in its parent) or of DEST itself (a raw or .npy load
 *    into one tensor). A load closes a tensor's file once its bytes are in (lib/load.c,
 *    done_one()), so this is when the first tensor has landed.
 *  - "end": the command's exit, from waitpid.
 * The watcher is this process, asleep in read() on the inotify descriptor: its cost is a
 * wake-up per event, none of it on the command's path; its timestamps are taken when it
 * wakes, so they are late by at most a wake-up (tens of microseconds) on a loaded machine.
 * A run in which a file of DEST was closed before the watch on DEST was in place (it is
 * there and the command has it open no more) missed the first close: it is counted as
 * raced, discarded and run again (at most RUNS more).
 * Output: one line per run, "run N first_ms end_ms user_ms sys_ms", then
 * "min/median/max first_ms end_ms raced N failed N". A failed command (its message on
 * stderr) is counted and run again, as a raced run is; exit 1 after RUNS of either. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchutil.h"

extern char **environ;

static int rm_one(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP || type == FTW_D)
		rmdir(p);
	else
		unlink(p);
	return 0;
}

/* Whether process pid has path open (its /proc/PID/fd) */
static int has_open(pid_t pid, const char *path)
{
	char fdd[64], l[PATH_MAX + 64], t[PATH_MAX];
	struct dirent *e;
	DIR *dir;
	int yes = 0;

	snprintf(fdd, sizeof(fdd), "/proc/%d/fd", (int)pid);
	if (!(dir = opendir(fdd)))
		return 0;
	while (!yes && (e = readdir(dir))) {
		ssize_t n;

		snprintf(l, sizeof(l), "%s/%s", fdd, e->d_name);
		n = readlink(l, t, sizeof(t) - 1);
		if (n > 0) {
			t[n] = 0;
			yes = !strcmp(t, path);
		}
	}
	closedir(dir);
	return yes;
}

/* After the watch on directory d is in place: 1 when a file in it may have been closed
 * before (it exists and the command does not have it open), so its close went unseen. */
static int missed_close(const char *d, pid_t pid)
{
	DIR *dir = opendir(d);
	struct dirent *e;
	char p[PATH_MAX * 2];
	int missed = 0;

	if (!dir)
		return 0;
	while (!missed && (e = readdir(dir))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", d, e->d_name);
		missed = (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) || !has_open(pid, p);
	}
	closedir(dir);
	return missed;
}

/* One run: 0 and *first, *end in seconds (*first < 0: no close seen), 1 raced, -1 failed */
static int one(const char *dest, char **cmd, double *first, double *end, struct rusage *ru)
{
	char pbuf[PATH_MAX], nbuf[PATH_MAX], ev[64 * 1024] __attribute__((aligned(8)));
	const char *parent, *name;
	int in, pw, pidfd, dw = -1, status = 0, raced = 0, done = 0;
	pid_t pid;
	double t0;

	nftw(dest, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(pbuf, sizeof(pbuf), "%s", dest);
	snprintf(nbuf, sizeof(nbuf), "%s", dest);
	parent = dirname(pbuf);
	name = basename(nbuf);
	in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (in < 0 || (pw = inotify_add_watch(in, parent, IN_CREATE | IN_CLOSE_WRITE)) < 0) {
		perror("inotify");
		return -1;
	}
	*first = -1;
	t0 = bench_now();
	if (posix_spawn(&pid, cmd[0], NULL, NULL, cmd, environ)) {
		perror(cmd[0]);
		close(in);
		return -1;
	}
	/* the exit wakes the poll through a pidfd, as an event does through inotify */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	while (!done) {
		struct pollfd pf[2] = { { .fd = in, .events = POLLIN },
					{ .fd = pidfd, .events = POLLIN } };
		ssize_t n;

		if (poll(pf, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 1) > 0 &&
		    (pf[0].revents & POLLIN) && (n = read(in, ev, sizeof(ev))) > 0) {
			double t = bench_now();

			for (char *p = ev; p < ev + n;) {
				struct inotify_event *e = (struct inotify_event *)p;

				p += sizeof(*e) + e->len;
				if (e->wd == pw && e->len && strcmp(e->name, name) == 0) {
					if ((e->mask & IN_CREATE) && (e->mask & IN_ISDIR) && dw < 0) {
						dw = inotify_add_watch(in, dest, IN_CLOSE_WRITE);
						if (dw >= 0 && missed_close(dest, pid))
							raced = 1;
					} else if ((e->mask & IN_CLOSE_WRITE) && *first < 0) {
						*first = t - t0;
					}
				} else if (e->wd == dw && dw >= 0 && (e->mask & IN_CLOSE_WRITE) &&
					   *first < 0) {
					*first = t - t0;
				}
			}
		}
		if (wait4(pid, &status, WNOHANG, ru) == pid) {
			*end = bench_now() - t0;
			done = 1;
		}
	}
	close(in);
	if (pidfd >= 0)
		close(pidfd);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "%s failed (status %d)\n", cmd[0], status);
		return -1;
	}
	return raced;
}

static int by_double(const void *a, const void *b)
{
	return bench_cmp_double(a, b);
}

int main(int argc, char **argv)
{
	double *firsts, *ends;
	int runs, got = 0, raced = 0, failed = 0;

	if (argc < 4 || (runs = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: load_fixed RUNS DEST CMD [ARGS...]\n");
		return 2;
	}
	firsts = calloc((size_t)runs, sizeof(double));
	ends = calloc((size_t)runs, sizeof(double));
	if (!firsts || !ends) {
		free(firsts);
		free(ends);
		return 1;
	}
	while (got < runs) {
		struct rusage ru;
		double f, e;
		int rc = one(argv[2], argv + 3, &f, &e, &ru);

		if (rc < 0 && ++failed > runs)
			goto out;
		if (rc > 0 && ++raced > runs) {
			fprintf(stderr, "load_fixed: %d runs raced the watch\n", raced);
			goto out;
		}
		if (rc)
			continue;
		printf("run %d %.2f %.2f %.2f %.2f\n", got + 1, f * 1e3, e * 1e3,
		       ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3,
		       ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3);
		firsts[got] = f;
		ends[got] = e;
		got++;
	}
	qsort(firsts, (size_t)runs, sizeof(double), by_double);
	qsort(ends, (size_t)runs, sizeof(double), by_double);
	printf("min/median/max first_ms %.2f %.2f %.2f end_ms %.2f %.2f %.2f raced %d failed %d\n",
	       firsts[0] * 1e3, firsts[runs / 2] * 1e3, firsts[runs - 1] * 1e3, ends[0] * 1e3,
	       ends[runs / 2] * 1e3, ends[runs - 1] * 1e3, raced, failed);
out:
	free(firsts);
	free(ends);
	return got < runs;
}
