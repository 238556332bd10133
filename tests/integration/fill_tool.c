/* Issues one fill ioctl (core/fill_ioctl.h) on a tensor's file, as libtensorfs's loads do,
 * or a hostile variant of it, for the tests of the daemon's side (load/t_fill_*.sh).
 *
 *   fill_tool TENSOR SOURCE [key=value...]
 *     src_off, dst_off, len   the range (len: the source's size unless given)
 *     flags                   the request's flags field
 *     ino_delta               added to the source's inode number (a file that is not it)
 *     fd                      the fd number sent instead of the source's
 *     open=path|wronly|rdonly how the source is opened (O_PATH, O_WRONLY; default O_RDONLY)
 *     tensor=rdonly           the tensor opened read-only
 *     cmd                     the ioctl number sent instead of TFS_IOC_FILL
 * Prints "ok", or "error: ENAME" and exits 1. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fill_ioctl.h"

static int fail(int e)
{
	const char *name = strerrorname_np(e);

	printf("error: %s\n", name ? name : "E?");
	return 1;
}

int main(int argc, char **argv)
{
	struct tfs_fill_req q = { 0 };
	unsigned long cmd = TFS_IOC_FILL;
	long long ino_delta = 0, fd_override = 0;
	int have_len = 0, have_fd = 0, sflags = O_RDONLY, tflags = O_RDWR, src, t;
	struct stat st;

	if (argc < 3) {
		fprintf(stderr, "usage: fill_tool TENSOR SOURCE [key=value...]\n");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i], *v = strchr(a, '=');

		if (!v) {
			fprintf(stderr, "fill_tool: '%s' is not key=value\n", a);
			return 2;
		}
		v++;
		if (!strncmp(a, "src_off=", 8))
			q.src_off = strtoull(v, NULL, 0);
		else if (!strncmp(a, "dst_off=", 8))
			q.dst_off = strtoull(v, NULL, 0);
		else if (!strncmp(a, "len=", 4))
			q.len = strtoull(v, NULL, 0), have_len = 1;
		else if (!strncmp(a, "flags=", 6))
			q.flags = (uint32_t)strtoul(v, NULL, 0);
		else if (!strncmp(a, "ino_delta=", 10))
			ino_delta = strtoll(v, NULL, 0);
		else if (!strncmp(a, "fd=", 3))
			fd_override = strtoll(v, NULL, 0), have_fd = 1;
		else if (!strcmp(a, "open=path"))
			sflags = O_PATH;
		else if (!strcmp(a, "open=wronly"))
			sflags = O_WRONLY;
		else if (!strcmp(a, "open=rdonly"))
			sflags = O_RDONLY;
		else if (!strcmp(a, "tensor=rdonly"))
			tflags = O_RDONLY;
		else if (!strncmp(a, "cmd=", 4))
			cmd = strtoul(v, NULL, 0);
		else {
			fprintf(stderr, "fill_tool: unknown key in '%s'\n", a);
			return 2;
		}
	}
	/* O_NONBLOCK: a FIFO as the source opens at once */
	src = open(argv[2], sflags | O_NONBLOCK | O_CLOEXEC);
	if (src < 0 || fstat(src, &st))
		return fail(errno);
	t = open(argv[1], tflags | O_CLOEXEC);
	if (t < 0)
		return fail(errno);
	q.fd = have_fd ? (int32_t)fd_override : src;
	q.dev = (uint64_t)st.st_dev;
	q.ino = (uint64_t)st.st_ino + (uint64_t)ino_delta;
	if (!have_len)
		q.len = (uint64_t)st.st_size;
	if (ioctl(t, cmd, &q))
		return fail(errno);
	printf("ok\n");
	return 0;
}
