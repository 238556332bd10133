/* O_DIRECT reads for loads (direct_io.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "direct_io.h"

/* Pages sampled to tell whether a file is in the page cache. */
#define SAMPLES 256

/* Whether at most a tenth of the sampled pages of fd are resident: mincore on a mapping
 * of the file asks the page cache without reading anything. 1, 0, or -1 (unknown). */
static int mostly_cold(int fd, uint64_t size)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t pages = (size + (uint64_t)pg - 1) / (uint64_t)pg, step;
	int resident = 0, seen = 0;
	unsigned char vec;
	char *m;

	if (pg <= 0 || size == 0 || size > (uint64_t)SIZE_MAX)
		return -1;
	m = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	step = pages > SAMPLES ? pages / SAMPLES : 1;
	for (uint64_t p = 0; p < pages; p += step) {
		if (mincore(m + p * (uint64_t)pg, (size_t)pg, &vec))
			break;
		resident += vec & 1;
		seen++;
	}
	munmap(m, (size_t)size);
	return seen ? resident * 10 <= seen : -1;
}

int tfs_dio_open(int fd, uint64_t size, int mode)
{
	const char *env = getenv("TFS_LOAD_DIRECT");
	char path[64];

	if (mode < 0 && env && (!strcmp(env, "0") || !strcmp(env, "1")))
		mode = env[0] - '0';
	if (mode == 0 || (mode < 0 && mostly_cold(fd, size) != 1))
		return -1;
	/* The same file, again: O_DIRECT is a property of the open file, and the caller's
	 * stays as it is for the page cache's readers (the daemon's fills among them). */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
}

int tfs_dio_read(int dfd, char *buf, uint64_t foff, size_t len, char **at)
{
	uint64_t start = foff & ~(uint64_t)(TFS_DIO_ALIGN - 1);
	size_t delta = (size_t)(foff - start), need = delta + len, got = 0;
	size_t want = (need + TFS_DIO_ALIGN - 1) & ~(size_t)(TFS_DIO_ALIGN - 1);

	while (got < need) {
		ssize_t k = pread(dfd, buf + got, want - got, (off_t)(start + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -ENODATA;
		got += (size_t)k;
		/* A short read ends the file; past it the next read says 0. A read of a
		 * size not a multiple of the block may only come at the end. */
		if (got < need && got % TFS_DIO_ALIGN)
			return -ENODATA;
	}
	*at = buf + delta;
	return 0;
}
