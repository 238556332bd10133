/* The id in a VMM tensor's handle (fs/mem/cuda/vmm_drv.h): ids outlive the daemon that
 * made them (a restart adopts them, holders keep them mapped, and libtensorfs tells a
 * grown tensor from another by its id), so two daemons that run as the same pid, as a
 * pid reused after a restart would, must not make the same ids. Each daemon here is the
 * first process of a PID namespace of its own: pid 1 both times. */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#ifdef TFS_HAVE_CUDA
#include "mem/cuda/vmm_drv.h"
#include "meta.h"
#endif

#ifdef TFS_HAVE_CUDA
static uint64_t id_of(const uint8_t *h)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | h[8 + i];
	return v;
}

/* The pid and the first two ids of a process that is pid 1 of a new PID namespace: 0, or
 * -errno where no namespace could be made (not root, or namespaces forbidden). */
static int ids_in_new_ns(int64_t out[3])
{
	int p[2], st;
	pid_t h;

	if (pipe(p))
		return -errno;
	if ((h = fork()) < 0)
		return -errno;
	if (h == 0) {
		pid_t c;

		close(p[0]);
		if (unshare(CLONE_NEWPID))
			_exit(3);
		if ((c = fork()) < 0)
			_exit(4);
		if (c == 0) {
			uint8_t a[TFS_IPC_HANDLE_SIZE], b[TFS_IPC_HANDLE_SIZE];
			int64_t v[3];

			tfs_vmm_handle_make(a, 2 << 20, 0);
			tfs_vmm_handle_make(b, 2 << 20, 0);
			v[0] = getpid();
			v[1] = (int64_t)id_of(a);
			v[2] = (int64_t)id_of(b);
			_exit(write(p[1], v, sizeof(v)) == sizeof(v) ? 0 : 5);
		}
		_exit(waitpid(c, &st, 0) == c && WIFEXITED(st) ? WEXITSTATUS(st) : 6);
	}
	close(p[1]);
	st = 0;
	waitpid(h, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		close(p[0]);
		return WIFEXITED(st) && WEXITSTATUS(st) == 3 ? -EPERM : -EIO;
	}
	st = read(p[0], out, 3 * sizeof(int64_t)) == 3 * sizeof(int64_t) ? 0 : -EIO;
	close(p[0]);
	return st;
}
#endif

int main(void)
{
#ifdef TFS_HAVE_CUDA
	int64_t a[3], b[3];
	int rc;

	if ((rc = ids_in_new_ns(a)) == -EPERM || (rc == 0 && (rc = ids_in_new_ns(b)) == -EPERM)) {
		printf("skip - two daemons of one pid make different VMM ids: no PID namespace "
		       "(not root?)\n");
		printf("skip - one process's VMM ids differ: no PID namespace (not root?)\n");
	} else {
		ok(rc == 0, "the two processes ran");
		ok(rc == 0 && a[0] == 1 && b[0] == 1, "each was pid 1 of its namespace");
		ok(rc == 0 && a[1] != b[1] && a[1] != b[2] && a[2] != b[1] && a[2] != b[2],
		      "two daemons of one pid make different VMM ids");
		ok(rc == 0 && a[1] != a[2] && b[1] != b[2], "one process's VMM ids differ");
	}
#else
	printf("skip - two daemons of one pid make different VMM ids: built without CUDA\n");
	printf("skip - one process's VMM ids differ: built without CUDA\n");
#endif
	return failures ? 1 : 0;
}
