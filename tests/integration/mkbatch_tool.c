/* Issues one batch create ioctl (core/mkbatch.h) on a tensor's file, as libtensorfs's
 * loads do, or a hostile variant of it, for the tests of the daemon's side
 * (load/t_mkbatch*.sh, perm/t_mkbatch_perm.sh).
 *
 *   mkbatch_tool TENSOR [key=value...] ENTRY...
 *     TENSOR         the file the request goes on, made by this open (O_CREAT | O_EXCL,
 *                    read and write, as a loader makes it); the entries are made in its
 *                    directory
 *     ENTRY          NAME:DTYPE:DIMS, e.g. w:f32:4,8 or s:u8: (a scalar); DTYPE may be
 *                    #N, the raw value; written byte by byte, unchecked, so any of
 *                    them may be what the daemon must refuse
 *     open=existing|rdonly|dir  TENSOR opened as it is (not made by this open), made
 *                    read-only, or opened as a directory, instead
 *     fd=N           the request goes on descriptor N, inherited, instead (TENSOR unused)
 *     self=1         TFS_MK_SELF: the first entry is TENSOR's own (typed by the request)
 *     device=N|cpu   the device flag and value
 *     mode=OCTAL     permission bits (default 0644)
 *     count=N        the count field instead of the number of entries
 *     flags=N        the flags field, or'ed into what device= sets
 *     junk=N         a non-zero byte N bytes past the entries
 *     cmd=N          the ioctl number sent instead
 *     nlen=N         the first entry's name length field instead of its own
 * Prints "made N err ENAME" (err 0 when all were made), or "error: ENAME" and exits 1. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "dtype.h"
#include "mkbatch.h"

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "E?";
}

int main(int argc, char **argv)
{
	static struct tfs_mk_req q;
	unsigned long cmd = TFS_IOC_MKBATCH;
	long count = -1, junk = -1, nlen = -1;
	int oflags = O_RDWR | O_CREAT | O_EXCL, use_fd = -1;
	size_t used = 0;
	uint32_t n = 0, first_at = 0;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: mkbatch_tool TENSOR [key=value...] ENTRY...\n");
		return 2;
	}
	q.mode = 0644;
	for (int i = 2; i < argc; i++) {
		char *a = argv[i], *c1, *c2;

		if (!strncmp(a, "device=", 7)) {
			q.flags |= TFS_MK_DEVICE;
			q.device = !strcmp(a + 7, "cpu") ? TFS_DEVICE_CPU : atoi(a + 7);
		} else if (!strncmp(a, "fd=", 3)) {
			use_fd = atoi(a + 3);
		} else if (!strcmp(a, "self=1")) {
			q.flags |= TFS_MK_SELF;
		} else if (!strcmp(a, "open=existing")) {
			oflags = O_RDWR;
		} else if (!strcmp(a, "open=rdonly")) {
			oflags = O_RDONLY | O_CREAT | O_EXCL;
		} else if (!strcmp(a, "open=dir")) {
			oflags = O_RDONLY | O_DIRECTORY;
		} else if (!strncmp(a, "mode=", 5)) {
			q.mode = (uint32_t)strtoul(a + 5, NULL, 8);
		} else if (!strncmp(a, "count=", 6)) {
			count = strtol(a + 6, NULL, 0);
		} else if (!strncmp(a, "flags=", 6)) {
			q.flags |= (uint32_t)strtoul(a + 6, NULL, 0);
		} else if (!strncmp(a, "junk=", 5)) {
			junk = strtol(a + 5, NULL, 0);
		} else if (!strncmp(a, "cmd=", 4)) {
			cmd = strtoul(a + 4, NULL, 0);
		} else if (!strncmp(a, "nlen=", 5)) {
			nlen = strtol(a + 5, NULL, 0);
		} else if ((c1 = strchr(a, ':')) && (c2 = strchr(c1 + 1, ':'))) {
			uint64_t dims[32];
			uint16_t len = (uint16_t)(c1 - a);
			unsigned nd = 0;
			tfs_dtype dt;
			int dv;

			*c2 = 0;
			if (c1[1] == '#')
				dv = atoi(c1 + 2);
			else if (tfs_dtype_parse(c1 + 1, strlen(c1 + 1), &dt) == 0)
				dv = (int)dt;
			else
				return fprintf(stderr, "mkbatch_tool: dtype %s\n", c1 + 1), 2;
			for (char *s = c2 + 1; *s && nd < 32; s = strchr(s, ',') ? strchr(s, ',') + 1 : "")
				dims[nd++] = strtoull(s, NULL, 0);
			if (used + 4 + nd * 8 + len > TFS_MK_DATA)
				return fprintf(stderr, "mkbatch_tool: too many entries\n"), 2;
			if (n == 0)
				first_at = (uint32_t)used;
			memcpy(q.data + used, &len, 2);
			q.data[used + 2] = (uint8_t)dv;
			q.data[used + 3] = (uint8_t)nd;
			memcpy(q.data + used + 4, dims, nd * 8);
			memcpy(q.data + used + 4 + nd * 8, a, len);
			used += 4 + nd * 8 + len;
			n++;
		} else {
			fprintf(stderr, "mkbatch_tool: '%s' is neither key=value nor an entry\n", a);
			return 2;
		}
	}
	q.count = count >= 0 ? (uint32_t)count : n;
	if (nlen >= 0 && n) {
		uint16_t l = (uint16_t)nlen;

		memcpy(q.data + first_at, &l, 2);
	}
	if (junk >= 0 && used + (size_t)junk < TFS_MK_DATA)
		q.data[used + (size_t)junk] = 0x5a;
	fd = use_fd >= 0 ? use_fd : open(argv[1], oflags | O_CLOEXEC, 0644);
	if (fd < 0) {
		printf("error: %s\n", ename(errno));
		return 1;
	}
	if (ioctl(fd, cmd, &q)) {
		printf("error: %s\n", ename(errno));
		return 1;
	}
	printf("made %u err %s\n", q.made, q.err ? ename(q.err) : "0");
	return 0;
}
