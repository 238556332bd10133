/* Issues one fill ioctl (lib/fill_ioctl.h) on a tensor's file, as libtensorfs's loads do,
 * or a hostile variant of it, for the tests of the daemon's side (load/t_fill_*.sh); or
 * one drain, as its saves do (load/t_drain.sh).
 *
 *   fill_tool TENSOR SOURCE [key=value...]
 *     src_off, dst_off, len   the range (len: the source's size unless given)
 *     flags                   the request's flags field
 *     ino_delta               added to the source's inode number (a file that is not it)
 *     fd                      the fd number sent instead of the source's
 *     open=path|wronly|rdonly how the source is opened (O_PATH, O_WRONLY; default O_RDONLY)
 *     tensor=rdonly           the tensor opened read-only
 *     cmd                     the ioctl number sent instead of TFS_IOC_FILL
 *
 *   fill_tool drain TENSOR OUT [key=value...]: the tensor's bytes into a shared mapping of
 *   the file OUT (which must exist), as a save does
 *     src_off, len            the range of the tensor (len: the tensor's size)
 *     at                      where in OUT (default 0)
 *     addr                    the address sent instead of the mapping's
 *     flags, pad              the request's fields
 *     map=ro|gone|long        mapped read-only; unmapped before the call; mapped len + 1
 *                             MiB long, so that the range runs past the end of OUT
 *     tensor=wronly           the tensor opened write-only
 * Prints "ok", or "error: ENAME" and exits 1. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fill_ioctl.h"

static int fail(int e)
{
	const char *name = strerrorname_np(e);

	printf("error: %s\n", name ? name : "E?");
	return 1;
}

static int drain_main(int argc, char **argv)
{
	struct tfs_drain_req q = { 0 };
	uint64_t at = 0, addr = 0;
	int have_len = 0, have_addr = 0, prot = PROT_READ | PROT_WRITE, gone = 0, tflags = O_RDONLY;
	size_t extra = 0, maplen;
	struct stat st;
	char *map;
	int t, out;

	for (int i = 3; i < argc; i++) {
		const char *a = argv[i], *v = strchr(a, '=');

		if (!v) {
			fprintf(stderr, "fill_tool: '%s' is not key=value\n", a);
			return 2;
		}
		v++;
		if (!strncmp(a, "src_off=", 8))
			q.src_off = strtoull(v, NULL, 0);
		else if (!strncmp(a, "len=", 4))
			q.len = strtoull(v, NULL, 0), have_len = 1;
		else if (!strncmp(a, "at=", 3))
			at = strtoull(v, NULL, 0);
		else if (!strncmp(a, "addr=", 5))
			addr = strtoull(v, NULL, 0), have_addr = 1;
		else if (!strncmp(a, "flags=", 6))
			q.flags = (uint32_t)strtoul(v, NULL, 0);
		else if (!strncmp(a, "pad=", 4))
			q.pad = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(a, "map=ro"))
			prot = PROT_READ;
		else if (!strcmp(a, "map=gone"))
			gone = 1;
		else if (!strcmp(a, "map=long"))
			extra = 1 << 20;
		else if (!strcmp(a, "tensor=wronly"))
			tflags = O_WRONLY;
		else {
			fprintf(stderr, "fill_tool: unknown key in '%s'\n", a);
			return 2;
		}
	}
	t = open(argv[1], tflags | O_CLOEXEC);
	if (t < 0 || fstat(t, &st))
		return fail(errno);
	if (!have_len)
		q.len = (uint64_t)st.st_size;
	out = open(argv[2], (prot & PROT_WRITE ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (out < 0 || fstat(out, &st))
		return fail(errno);
	maplen = (size_t)st.st_size + extra;
	map = mmap(NULL, maplen ? maplen : 1, prot, MAP_SHARED, out, 0);
	if (map == MAP_FAILED)
		return fail(errno);
	if (gone)
		munmap(map, maplen ? maplen : 1);
	q.addr = have_addr ? addr : (uint64_t)(uintptr_t)(map + at);
	if (extra)                     /* the range's end past the end of OUT */
		q.addr = (uint64_t)(uintptr_t)(map + maplen - q.len);
	if (ioctl(t, TFS_IOC_DRAIN, &q))
		return fail(errno);
	printf("ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct tfs_fill_req q = { 0 };
	unsigned long cmd = TFS_IOC_FILL;
	long long ino_delta = 0, fd_override = 0;
	int have_len = 0, have_fd = 0, sflags = O_RDONLY, tflags = O_RDWR, src, t;
	struct stat st;

	if (argc > 3 && !strcmp(argv[1], "drain"))
		return drain_main(argc - 1, argv + 1);
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
