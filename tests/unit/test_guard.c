/* Unit tests of the guarded copy (fs/util/guard.h): a copy into or out of a mapping whose
 * object was truncated under it answers -EIO and the process goes on; copies of memory
 * that is there are plain copies; a fault outside a guarded copy still kills. Spans: memory
 * lent to code that copies it without a guard (UCX) survives the object truncated under
 * it, and the span says so when it is given back. */
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

/* A span over pages 1..3 of an object, which is then truncated to one page: plain copies
 * into and out of the span go on (what UCX does), the span answers -EIO when given back,
 * and the object is mapped back: guarded copies see the truncation again, and what the
 * plain copies wrote never reached the object. */
static void spans(size_t page)
{
	size_t len = 4 * page;
	static char buf[1 << 16];
	int fd = memfd_create("span", MFD_CLOEXEC);
	struct tfs_guard_span s = { 0 }, s0 = { 0 }, none = { 0 };
	char *m;
	int zero = 1;

	tfs_guard_thread();
	if (fd < 0 || ftruncate(fd, (off_t)len) ||
	    (m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		CHECK(0, "span: memfd and mapping");
		return;
	}
	memset(m, 'b', len);
	none = (struct tfs_guard_span){ .map = m, .fd = fd, .p = m, .len = len };
	CHECK(tfs_guard_span_add(&none) == 0 && tfs_guard_span_del(&none) == 0,
	      "span: lent and given back untouched: 0");
	s = (struct tfs_guard_span){ .map = m, .fd = fd, .p = m + page, .len = 3 * page };
	s0 = (struct tfs_guard_span){ .map = m, .fd = fd, .p = m, .len = page };
	CHECK(tfs_guard_span_add(&s) == 0 && tfs_guard_span_add(&s0) == 0, "span: two lent");
	if (ftruncate(fd, (off_t)page))
		return;
	memset(buf, 'c', len);
	memcpy(m + page, buf, 3 * page);        /* unguarded, as UCX copies */
	memcpy(buf, m + 2 * page, page);
	memcpy(m, buf, page);
	CHECK(1, "span: plain copies into and out of truncated pages: the process lives");
	CHECK(tfs_guard_span_del(&s) == -EIO, "span: the truncated span given back: -EIO");
	CHECK(tfs_guard_span_del(&s0) == 0, "span: the span over what is left: 0");
	CHECK(tfs_guarded_copy(buf, m + page, page) == -EIO,
	      "span: the object mapped back: a guarded copy of a page gone is -EIO again");
	if (ftruncate(fd, (off_t)len))
		return;
	CHECK(tfs_guarded_copy(buf, m + page, 3 * page) == 0, "span: grown back, it copies");
	for (size_t i = 0; i < 3 * page; i++)
		zero &= buf[i] == 0;
	CHECK(zero, "span: the plain copies' bytes never reached the object");
	CHECK(m[0] == 'c', "span: the page that was there took its bytes");
	munmap(m, len);
	close(fd);
}

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

	spans(page);

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
