/* Whole reads and writes at an offset, for the loaders and the daemon's fills: the short
 * counts and EINTR that pread/pwrite may return are retried here, once. */
#ifndef TFS_FILEIO_H
#define TFS_FILEIO_H

#include <stddef.h>
#include <stdint.h>

/* Reads n bytes of fd at off into buf. 0; -ENODATA when the file ends first (buf then
 * holds what was there); a failed read's -errno. */
int tfs_pread_full(int fd, void *buf, size_t n, uint64_t off);
/* Writes n bytes of buf at off. 0, or -errno (-EIO for a write of nothing). */
int tfs_pwrite_full(int fd, const void *buf, size_t n, uint64_t off);

#endif
