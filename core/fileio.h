/* Whole reads and writes at an offset, for the loaders and the daemon's fills: the short
 * counts and EINTR that pread/pwrite may return are retried here, once. And the mapping of
 * pages before a copy touches them. */
#ifndef TFS_FILEIO_H
#define TFS_FILEIO_H

#include <stddef.h>
#include <stdint.h>

/* Reads n bytes of fd at off into buf. 0; -ENODATA when the file ends first (buf then
 * holds what was there); a failed read's -errno. */
int tfs_pread_full(int fd, void *buf, size_t n, uint64_t off);
/* Writes n bytes of buf at off. 0, or -errno (-EIO for a write of nothing). */
int tfs_pwrite_full(int fd, const void *buf, size_t n, uint64_t off);

#ifndef MADV_POPULATE_WRITE            /* Linux 5.14 uapi, missing from older headers */
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

/* madvise(advice) over the pages holding [p, p + len): MADV_POPULATE_READ/WRITE map them in
 * one call where a copy would take a fault per 4 KiB page, and answer an error where
 * touching them would raise SIGBUS. 0 or -errno; -EINVAL from kernels before 5.14. */
int tfs_populate(void *p, size_t len, int advice);

#endif
