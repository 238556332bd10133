/* Unit tests of the guarded copy (fs/util/guard.h): a copy into or out of a mapping whose
 * object was truncated under it answers -EIO and the process goes on; copies of memory
 * that is there are plain copies; a fault outside a guarded copy still kills. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/guard.h"

static int fails;

#define CHECK(cond, ...)                                           \
	do {                                                       \
		int ok_ = !!(cond);                                \
		printf(ok_ ? "ok - " : "not ok - ");               \
		printf(__VA_ARGS__);                               \
		printf("\n");                                      \
		fails += !ok_;                                     \
	} while (0)

int main(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = 4 * page;
	static char buf[1 << 16];
	int fd = memfd_create("guard", MFD_CLOEXEC), status;
	char *m;
	pid_t pid;
	sigset_t all;

	/* As in the daemon's request threads, which start with every signal blocked. */
	setvbuf(stdout, NULL, _IONBF, 0);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (fd < 0 || ftruncate(fd, (off_t)len))
		return perror("memfd"), 1;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return perror("mmap"), 1;
	memset(buf, 'a', len);
	CHECK(tfs_guarded_copy(m, buf, len) == 0 && m[len - 1] == 'a', "a copy in is a copy");
	memset(buf, 0, len);
	CHECK(tfs_guarded_copy(buf, m, len) == 0 && buf[len - 1] == 'a', "a copy out is a copy");
	CHECK(tfs_guarded_copy(m + 1, m, 16) == 0 && m[16] == 'a', "overlapping ranges move");

	if (ftruncate(fd, (off_t)page))
		return perror("ftruncate"), 1;
	CHECK(tfs_guarded_copy(m, buf, len) == -EIO, "a copy into a truncated object: -EIO");
	CHECK(tfs_guarded_copy(buf, m + page, page) == -EIO, "a copy out of it: -EIO");
	for (int i = 0; i < 1000; i++)
		if (tfs_guarded_copy(buf, m + 2 * page, 8) != -EIO) {
			CHECK(0, "fault %d answered -EIO", i);
			break;
		}
	CHECK(tfs_guarded_copy(buf, m, page) == 0, "what is left still copies, after 1000 faults");

#ifdef __SANITIZE_ADDRESS__
	/* The sanitizer's handler reports it, and its report fails the run. */
	(void)pid;
	(void)status;
	printf("skip - an unguarded touch still kills: the sanitizer build reports it instead\n");
#else
	/* Outside a guarded copy a fault keeps its default action (or goes to the handler
	 * that was there before). */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, 2);
		pthread_sigmask(SIG_UNBLOCK, &all, NULL);
		volatile char c = m[3 * page];

		(void)c;
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid &&
	      ((WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS) ||
	       (WIFEXITED(status) && WEXITSTATUS(status) != 0)),
	      "an unguarded touch still kills (status %#x)", status);
#endif
	return fails ? 1 : 0;
}
