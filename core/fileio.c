/* Whole reads and writes at an offset (fileio.h). */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fileio.h"

int tfs_pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -ENODATA;
		got += (size_t)k;
	}
	return 0;
}

int tfs_pwrite_full(int fd, const void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t k = pwrite(fd, (const char *)buf + done, n - done, (off_t)(off + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO;
		done += (size_t)k;
	}
	return 0;
}

int tfs_populate(void *p, size_t len, int advice)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095;

	return madvise((void *)a, (size_t)((uintptr_t)p + len - a), advice) ? -errno : 0;
}
